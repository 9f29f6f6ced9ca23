import ArgumentParser
import Foundation

/// The text of a `--config` file: a JSON object of strings and numbers, or `key = value` lines with `#` comments.
enum ConfigFileText {
    /// The file's settings by key. - Throws: `ValidationError` naming the line or key that cannot be read.
    static func parse(_ text: String, path: String) throws -> [String: String] {
        if text.drop(while: \.isWhitespace).first == "{" {
            guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else {
                throw ValidationError("--config: \(path) is not a JSON object")
            }
            var values: [String: String] = [:]
            for (key, value) in object {
                switch value {
                case let string as String: values[key] = string
                case let number as NSNumber: values[key] = number.stringValue
                default: throw ValidationError("--config: \(key) in \(path) must be a string or a number")
                }
            }
            return values
        }
        var values: [String: String] = [:]
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let content = line.trimmingCharacters(in: .whitespaces)
            guard !content.isEmpty, !content.hasPrefix("#") else { continue }
            guard let equals = content.firstIndex(of: "=") else {
                throw ValidationError("--config: line \(number + 1) of \(path) is not key = value")
            }
            values[content[..<equals].trimmingCharacters(in: .whitespaces)] = content[content.index(after: equals)...].trimmingCharacters(
                in: .whitespaces
            )
        }
        return values
    }
}
