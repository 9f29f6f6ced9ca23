/// Random version-4 UUIDs as lowercase text, as APNs writes its ids.
///
/// Made by hand rather than with Foundation's `UUID().uuidString`: the emulator makes one or two per request,
/// and formatting through Foundation was a visible share of its time under load.
enum UUIDText {
    private static let digits = Array("0123456789abcdef".utf8)

    static func random() -> String {
        var generator = SystemRandomNumberGenerator()
        var high = generator.next() as UInt64
        var low = generator.next() as UInt64
        high = (high & 0xFFFF_FFFF_FFFF_0FFF) | 0x0000_0000_0000_4000  // version 4
        low = (low & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000  // RFC 4122 variant
        return String(unsafeUninitializedCapacity: 36) { buffer in
            var index = 0
            func write(_ value: UInt64, nibbles: Int) {
                for shift in stride(from: (nibbles - 1) * 4, through: 0, by: -4) {
                    buffer[index] = Self.digits[Int((value >> UInt64(shift)) & 0xF)]
                    index += 1
                }
            }
            func dash() {
                buffer[index] = UInt8(ascii: "-")
                index += 1
            }
            write(high >> 32, nibbles: 8)
            dash()
            write(high >> 16, nibbles: 4)
            dash()
            write(high, nibbles: 4)
            dash()
            write(low >> 48, nibbles: 4)
            dash()
            write(low, nibbles: 12)
            return index
        }
    }
}
