import Synchronization

/// Random version-4 UUIDs as lowercase text, as APNs writes its ids.
///
/// Made by hand rather than with Foundation's `UUID().uuidString`: the emulator makes one or two per request,
/// and formatting through Foundation was a visible share of its time under load. The bits come from SplitMix64 over
/// a counter seeded once by the system's generator: the ids must be unique, not secret, and asking the system for
/// each one (a `getrandom` call per 8 bytes) was a visible share too. The counter is atomic, so event loops making
/// ids at once never wait for each other.
enum UUIDText {
    private static let counter = Atomic<UInt64>(.random(in: .min ... .max))

    static func random() -> String {
        var high = Self.next()
        var low = Self.next()
        high = (high & 0xFFFF_FFFF_FFFF_0FFF) | 0x0000_0000_0000_4000  // version 4
        low = (low & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000  // RFC 4122 variant
        return String(unsafeUninitializedCapacity: 36) { buffer in
            var index = 0
            func write(_ value: UInt64, nibbles: Int) {
                for shift in stride(from: (nibbles - 1) * 4, through: 0, by: -4) {
                    let nibble = UInt8(truncatingIfNeeded: value >> UInt64(shift)) & 0xF
                    buffer[index] = nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") - 10 + nibble
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

    /// The next 64 bits: SplitMix64 (Steele, Lea and Flood), the counter advanced by its odd step and mixed. The step
    /// makes the counter visit every value before repeating, and the mix is a bijection, so no value repeats either.
    private static func next() -> UInt64 {
        var bits = Self.counter.wrappingAdd(0x9E37_79B9_7F4A_7C15, ordering: .relaxed).newValue
        bits = (bits ^ (bits >> 30)) &* 0xBF58_476D_1CE4_E5B9
        bits = (bits ^ (bits >> 27)) &* 0x94D0_49BB_1331_11EB
        return bits ^ (bits >> 31)
    }
}
