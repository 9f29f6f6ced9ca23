import Foundation

/// Splits a SQL script into statements at top-level semicolons, leaving semicolons inside quotes, quoted
/// identifiers, dollar-quoted bodies and comments alone. (PostgreSQL's extended protocol runs one statement a time.)
enum SQLStatements {
    static func split(_ script: String) -> [String] {
        let characters = Array(script.unicodeScalars)
        var statements: [String] = []
        var current = String.UnicodeScalarView()
        var index = 0
        func flush() {
            let statement = String(current).trimmingCharacters(in: .whitespacesAndNewlines)
            if !statement.isEmpty, !Self.isOnlyComments(statement) { statements.append(statement) }
            current = String.UnicodeScalarView()
        }
        while index < characters.count {
            let character = characters[index]
            let next = index + 1 < characters.count ? characters[index + 1] : nil
            switch character {
            case "'", "\"":
                let end = Self.closing(character, in: characters, from: index + 1)
                current.append(contentsOf: characters[index..<end])
                index = end
            case "-" where next == "-":
                let end = characters[index...].firstIndex(of: "\n") ?? characters.count
                current.append(contentsOf: characters[index..<end])
                index = end
            case "/" where next == "*":
                var end = index + 2
                while end + 1 < characters.count, !(characters[end] == "*" && characters[end + 1] == "/") { end += 1 }
                end = min(end + 2, characters.count)
                current.append(contentsOf: characters[index..<end])
                index = end
            case "$":
                if let tagEnd = characters[(index + 1)...].firstIndex(of: "$"),
                    characters[(index + 1)..<tagEnd].allSatisfy({ $0.properties.isAlphabetic || $0 == "_" || ("0"..."9").contains($0) })
                {
                    let tag = Array(characters[index...tagEnd])
                    var end = tagEnd + 1
                    while end + tag.count <= characters.count, Array(characters[end..<end + tag.count]) != tag { end += 1 }
                    end = min(end + tag.count, characters.count)
                    current.append(contentsOf: characters[index..<end])
                    index = end
                } else {
                    current.append(character)
                    index += 1
                }
            case ";":
                flush()
                index += 1
            default:
                current.append(character)
                index += 1
            }
        }
        flush()
        return statements
    }

    /// The index just after the quote that closes one opened before `start` (doubled quotes are escapes).
    private static func closing(_ quote: Unicode.Scalar, in characters: [Unicode.Scalar], from start: Int) -> Int {
        var index = start
        while index < characters.count {
            if characters[index] == quote {
                if index + 1 < characters.count, characters[index + 1] == quote {
                    index += 2
                    continue
                }
                return index + 1
            }
            index += 1
        }
        return characters.count
    }

    private static func isOnlyComments(_ statement: String) -> Bool {
        statement.split(separator: "\n").allSatisfy {
            $0.trimmingCharacters(in: .whitespaces).hasPrefix("--") || $0.trimmingCharacters(in: .whitespaces).isEmpty
        }
    }
}
