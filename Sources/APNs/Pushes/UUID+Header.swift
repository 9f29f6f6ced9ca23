import Foundation

extension UUID {
    /// The canonical lowercase text APNs wants in `apns-id` and `apns-request-id`: `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`
    /// (Foundation's `uuidString` is uppercase).
    var headerValue: String {
        let digits: StaticString = "0123456789abcdef"
        return withUnsafeBytes(of: self.uuid) { bytes in
            String(unsafeUninitializedCapacity: 36) { text in
                var position = 0
                for (index, byte) in bytes.enumerated() {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        text[position] = UInt8(ascii: "-")
                        position += 1
                    }
                    text[position] = digits.utf8Start[Int(byte >> 4)]
                    text[position + 1] = digits.utf8Start[Int(byte & 0x0F)]
                    position += 2
                }
                return position
            }
        }
    }
}
