import Foundation

/// Lowercase UUID strings, as APNs writes its ids.
enum UUIDText {
    static func random() -> String {
        UUID().uuidString.lowercased()
    }
}
