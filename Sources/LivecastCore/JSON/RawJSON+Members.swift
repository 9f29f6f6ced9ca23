import Foundation
import Synchronization

extension RawJSON {
    /// The `JSONDecoder.userInfo` key under which the ``Members`` of the document being decoded let a top-level
    /// `RawJSON` field keep the exact text the client sent instead of a re-encoding of its value.
    package static let rawMembersKey = CodingUserInfoKey(rawValue: "livecast.rawJSONMembers")!

    /// The top-level members of a document being decoded (``topLevelMembers(of:)``), found the first time they are
    /// asked for: a body without `RawJSON` fields (a registration, a bulk import's row) never pays for the walk.
    package final class Members: Sendable {
        private let bytes: [UInt8]
        private let found = Mutex<[String: RawJSON]??>(nil)

        /// - Parameter bytes: UTF-8 JSON text that a JSON parser has accepted (or will have, before anyone asks).
        package init(of bytes: [UInt8]) {
            self.bytes = bytes
        }

        /// The document's members, `nil` unless it is one JSON object.
        package var members: [String: RawJSON]? {
            self.found.withLock { found in
                if let members = found { return members }
                let members = RawJSON.topLevelMembers(of: self.bytes)
                found = .some(members)
                return members
            }
        }
    }

    /// The members of a JSON object, each value kept as the exact text it has in `bytes`.
    /// - Parameter bytes: UTF-8 JSON text that a JSON parser has accepted.
    /// - Returns: `nil` unless `bytes` is one JSON object.
    package static func topLevelMembers(of bytes: [UInt8]) -> [String: RawJSON]? {
        var scanner = MemberScanner(bytes: bytes)
        return scanner.members()
    }

    /// Whether `bytes` is one value as far as its structure goes: a value's text, white space around it, and nothing
    /// else (as ``topLevelElements(of:)`` checks an array; whether the text parses is not checked).
    package static func spansOneValue(_ bytes: [UInt8]) -> Bool {
        var scanner = MemberScanner(bytes: bytes)
        return scanner.oneValue()
    }

    /// Where each element of a JSON array lies in `bytes`, white space around it excluded.
    ///
    /// Only the array's own structure is checked (its brackets, its commas, nothing after it): an element's text is
    /// taken as far as a JSON value would reach, and the whole is JSON once each element's text parses on its own.
    /// - Parameter bytes: UTF-8 text.
    /// - Returns: `nil` unless `bytes` is one JSON array.
    package static func topLevelElements(of bytes: [UInt8]) -> [Range<Int>]? {
        var scanner = MemberScanner(bytes: bytes)
        return scanner.elements()
    }
}

/// Walks a JSON object or array that is known to be valid, finding where each member's value or element begins and
/// ends.
private struct MemberScanner {
    let bytes: [UInt8]
    var index = 0

    mutating func members() -> [String: RawJSON]? {
        self.skipWhiteSpace()
        guard self.take(UInt8(ascii: "{")) else { return nil }
        var members: [String: RawJSON] = [:]
        self.skipWhiteSpace()
        if self.take(UInt8(ascii: "}")) { return self.atEnd() ? members : nil }
        while true {
            self.skipWhiteSpace()
            let keyStart = self.index
            guard self.skipString(), let key = self.string(keyStart..<self.index) else { return nil }
            self.skipWhiteSpace()
            guard self.take(UInt8(ascii: ":")) else { return nil }
            self.skipWhiteSpace()
            let valueStart = self.index
            guard self.skipValue() else { return nil }
            members[key] = RawJSON(trusted: String(decoding: self.bytes[valueStart..<self.index], as: UTF8.self))
            self.skipWhiteSpace()
            if self.take(UInt8(ascii: ",")) { continue }
            return self.take(UInt8(ascii: "}")) && self.atEnd() ? members : nil
        }
    }

    mutating func oneValue() -> Bool {
        self.skipWhiteSpace()
        return self.skipValue() && self.atEnd()
    }

    mutating func elements() -> [Range<Int>]? {
        self.skipWhiteSpace()
        guard self.take(UInt8(ascii: "[")) else { return nil }
        var elements: [Range<Int>] = []
        self.skipWhiteSpace()
        if self.take(UInt8(ascii: "]")) { return self.atEnd() ? elements : nil }
        while true {
            self.skipWhiteSpace()
            let start = self.index
            guard self.skipValue() else { return nil }
            elements.append(start..<self.index)
            self.skipWhiteSpace()
            if self.take(UInt8(ascii: ",")) { continue }
            return self.take(UInt8(ascii: "]")) && self.atEnd() ? elements : nil
        }
    }

    /// The string whose JSON text, quotes included, lies in `range`: read straight from the bytes when it holds no
    /// escape, else by a JSON decoder.
    private func string(_ range: Range<Int>) -> String? {
        let text = self.bytes[range]
        guard text.contains(UInt8(ascii: "\\")) else { return String(decoding: text.dropFirst().dropLast(), as: UTF8.self) }
        return try? JSONDecoder().decode(String.self, from: Data(text))
    }

    private mutating func atEnd() -> Bool {
        self.skipWhiteSpace()
        return self.index == self.bytes.count
    }

    private mutating func take(_ byte: UInt8) -> Bool {
        guard self.index < self.bytes.count, self.bytes[self.index] == byte else { return false }
        self.index += 1
        return true
    }

    private mutating func skipWhiteSpace() {
        while self.index < self.bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(self.bytes[self.index]) { self.index += 1 }
    }

    /// Skips a string, escapes included; the index ends after its closing quote.
    private mutating func skipString() -> Bool {
        guard self.take(UInt8(ascii: "\"")) else { return false }
        while self.index < self.bytes.count {
            switch self.bytes[self.index] {
            case UInt8(ascii: "\\"): self.index += 2
            case UInt8(ascii: "\""):
                self.index += 1
                return true
            default: self.index += 1
            }
        }
        return false
    }

    /// Skips one value: a string, an object or array (nesting and strings inside included), or a literal.
    private mutating func skipValue() -> Bool {
        guard self.index < self.bytes.count else { return false }
        switch self.bytes[self.index] {
        case UInt8(ascii: "\""):
            return self.skipString()
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var depth = 0
            while self.index < self.bytes.count {
                switch self.bytes[self.index] {
                case UInt8(ascii: "\""):
                    guard self.skipString() else { return false }
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    if depth == 0 {
                        self.index += 1
                        return true
                    }
                default: break
                }
                self.index += 1
            }
            return false
        default:
            let start = self.index
            while self.index < self.bytes.count,
                ![UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x09, 0x0A, 0x0D].contains(self.bytes[self.index])
            {
                self.index += 1
            }
            return self.index > start
        }
    }
}
