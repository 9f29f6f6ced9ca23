import Synchronization

/// Random version-4 UUIDs as lowercase text, as APNs writes its ids.
///
/// Made by hand rather than with Foundation's `UUID().uuidString`: the emulator makes one or two per request,
/// and formatting through Foundation was a visible share of its time under load. The bits come from a generator
/// seeded once by the system's: the ids must be unique, not secret, and asking the system for each one (a
/// `getrandom` call per 8 bytes) was a visible share too.
enum UUIDText {
    private static let digits = Array("0123456789abcdef".utf8)
    private static let generator = Mutex(Xoshiro256StarStar())

    static func random() -> String {
        var (high, low) = Self.generator.withLock { generator in (generator.next(), generator.next()) }
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

/// xoshiro256** (Blackman and Vigna): a fast generator with 256 bits of state, seeded from the system's.
private struct Xoshiro256StarStar: RandomNumberGenerator {
    private var state: (UInt64, UInt64, UInt64, UInt64)

    init() {
        var system = SystemRandomNumberGenerator()
        self.state = (system.next(), system.next(), system.next(), system.next())
    }

    mutating func next() -> UInt64 {
        let result = (self.state.1 &* 5).rotatedLeft(by: 7) &* 9
        let shifted = self.state.1 << 17
        self.state.2 ^= self.state.0
        self.state.3 ^= self.state.1
        self.state.1 ^= self.state.2
        self.state.0 ^= self.state.3
        self.state.2 ^= shifted
        self.state.3 = self.state.3.rotatedLeft(by: 45)
        return result
    }
}

extension UInt64 {
    fileprivate func rotatedLeft(by count: UInt64) -> UInt64 {
        (self << count) | (self >> (64 &- count))
    }
}
