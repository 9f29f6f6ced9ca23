import Foundation
import Testing

@testable import LivecastCore

/// A top-level member kept as its text is refused exactly when decoding it as a value would refuse it, though it is
/// decoded only when that could fail (`RawJSON.mayNotDecode`).
@Suite struct RawJSONDecodingTests {
    struct Body: Decodable {
        let contentState: RawJSON
    }

    /// Values a JSON parser accepts, some of which Swift's decoder refuses (out of a `Double`'s range, half a
    /// surrogate pair).
    static let values = [
        #"{"score": 2, "team": "Giants", "live": true, "clock": null, "ratio": 0.5, "list": [1, -2.25, "e"]}"#,
        "1e400", "1E400", "-1e400", "1.8e308", "1.7976931348623157e308", "1e-400", "0.1e1", "1e5",
        "1" + String(repeating: "0", count: 308), "1" + String(repeating: "0", count: 309),
        "0." + String(repeating: "1", count: 400), "123456789012345678901234567890", "-0",
        #""\uD800""#, #""\udc00""#, #""\uDBFF\uDFFF""#, #""\uD83D\uDE00""#, #""\u00e9""#, #""\\uD800""#, #""a\/b""#,
        #"{"e": "1e400", "t": [true, false, null]}"#,
    ]

    @Test(arguments: Self.values)
    func aKeptMemberIsRefusedExactlyWhenItsValueIs(_ value: String) throws {
        let text = #"{"contentState": "# + value + "}"
        let plain = Result { try JSONDecoder().decode(Body.self, from: Data(text.utf8)) }
        let decoder = JSONDecoder()
        decoder.userInfo[RawJSON.rawMembersKey] = RawJSON.Members(of: Array(text.utf8))
        let kept = Result { try decoder.decode(Body.self, from: Data(text.utf8)) }
        #expect(((try? plain.get()) != nil) == ((try? kept.get()) != nil), "\(value)")
        if let body = try? kept.get() { #expect(body.contentState.text == value) }
    }

    @Test func someOfThoseAreRefused() {
        for value in ["1e400", "1" + String(repeating: "0", count: 309), #""\uD800""#] {
            #expect(throws: DecodingError.self) { try JSONDecoder().decode(Body.self, from: Data((#"{"contentState": "# + value + "}").utf8)) }
        }
    }

    @Test func onlyExponentsLongNumbersAndHalfSurrogatesAreDecoded() {
        for text in [#"{"score": 2, "team": "Giants", "live": true, "none": null, "ratio": 0.5}"#, #""\u00e9\uE000""#, #""\\uD800""#, "-12.5"] {
            #expect(!RawJSON(trusted: text).mayNotDecode, "\(text)")
        }
        for text in ["1e5", "[2E-3]", #""\uD800""#, #""x\udfff""#, String(repeating: "9", count: 301)] {
            #expect(RawJSON(trusted: text).mayNotDecode, "\(text)")
        }
    }
}
