/// Writes compact JSON objects byte by byte, in the order fields are added.
///
/// Payloads are built with this writer rather than `JSONEncoder` so that the bytes measured against APNs' size
/// limits are exactly the bytes sent, raw JSON is spliced in unchanged, and key order is stable.
struct JSONWriter {
    private(set) var bytes: [UInt8] = []
    private var needsComma: [Bool] = []

    init() {}

    mutating func beginObject() {
        self.bytes.append(UInt8(ascii: "{"))
        self.needsComma.append(false)
    }

    mutating func endObject() {
        self.bytes.append(UInt8(ascii: "}"))
        self.needsComma.removeLast()
    }

    /// Starts a member: writes the separator and `"key":`.
    mutating func key(_ key: String) {
        if self.needsComma[self.needsComma.count - 1] {
            self.bytes.append(UInt8(ascii: ","))
        }
        self.needsComma[self.needsComma.count - 1] = true
        self.string(key)
        self.bytes.append(UInt8(ascii: ":"))
    }

    mutating func string(_ value: String) {
        self.bytes.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): self.bytes.append(contentsOf: [0x5C, 0x22])
            case UInt8(ascii: "\\"): self.bytes.append(contentsOf: [0x5C, 0x5C])
            case 0x0A: self.bytes.append(contentsOf: [0x5C, UInt8(ascii: "n")])
            case 0x0D: self.bytes.append(contentsOf: [0x5C, UInt8(ascii: "r")])
            case 0x09: self.bytes.append(contentsOf: [0x5C, UInt8(ascii: "t")])
            case 0x00..<0x20:
                let hex: [UInt8] = Array("0123456789abcdef".utf8)
                self.bytes.append(contentsOf: [0x5C, UInt8(ascii: "u"), 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
            default: self.bytes.append(byte)
            }
        }
        self.bytes.append(UInt8(ascii: "\""))
    }

    mutating func int(_ value: Int) {
        self.bytes.append(contentsOf: String(value).utf8)
    }

    /// Writes a finite number; integral values are written without a fraction (`75`, not `75.0`).
    mutating func number(_ value: Double) {
        if value.rounded() == value, abs(value) < 1e15 {
            self.int(Int(value))
        } else {
            self.bytes.append(contentsOf: "\(value)".utf8)
        }
    }

    mutating func raw(_ json: RawJSON) {
        self.bytes.append(contentsOf: json.text.utf8)
    }

    mutating func stringArray(_ values: [String]) {
        self.bytes.append(UInt8(ascii: "["))
        for (index, value) in values.enumerated() {
            if index > 0 { self.bytes.append(UInt8(ascii: ",")) }
            self.string(value)
        }
        self.bytes.append(UInt8(ascii: "]"))
    }
}
