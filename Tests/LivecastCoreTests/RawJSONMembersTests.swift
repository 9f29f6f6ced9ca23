import Foundation
import LivecastCore
import Testing

/// A document's top-level members kept as the exact text the client sent.
@Suite struct RawJSONMembersTests {
    @Test func membersKeepTheirTextByteForByte() throws {
        let body = #"  { "contentState" : {"b": 1, "a": 2.50, "s": "}{\"]"} , "timestamp": 1800000000, "list": [1, [2, {"x": null}]], "t": true }  "#
        let members = try #require(RawJSON.topLevelMembers(of: Array(body.utf8)))
        #expect(members["contentState"]?.text == #"{"b": 1, "a": 2.50, "s": "}{\"]"}"#)
        #expect(members["timestamp"]?.text == "1800000000")
        #expect(members["list"]?.text == #"[1, [2, {"x": null}]]"#)
        #expect(members["t"]?.text == "true")
        #expect(members.count == 4)
    }

    @Test func onlyAnObjectHasMembers() {
        #expect(RawJSON.topLevelMembers(of: Array("[1, 2]".utf8)) == nil)
        #expect(RawJSON.topLevelMembers(of: Array(#""text""#.utf8)) == nil)
        #expect(RawJSON.topLevelMembers(of: Array("{}".utf8)) == [:])
    }

    @Test func elementsAreFoundWhereTheyLie() throws {
        let body = #" [ {"a": "],[\""} , 12,"x" ,[1, {"b": []}], null ] "#
        let ranges = try #require(RawJSON.topLevelElements(of: Array(body.utf8)))
        let bytes = Array(body.utf8)
        #expect(ranges.map { String(decoding: bytes[$0], as: UTF8.self) } == [#"{"a": "],[\""}"#, "12", #""x""#, #"[1, {"b": []}]"#, "null"])
        #expect(RawJSON.topLevelElements(of: Array(" [ ] ".utf8)) == [])
        #expect(RawJSON.topLevelElements(of: Array("{}".utf8)) == nil)
    }

    @Test func aValuesStructureIsCheckedWithoutParsingIt() {
        for text in [#" {"a": "}{", "b": [1, {}]} "#, "12", #""x""#, "null", "tru"] {
            #expect(RawJSON.spansOneValue(Array(text.utf8)), "\(text)")
        }
        for text in ["", " ", #"{"a": [1"#, "2]}", #"{"a": 1} {"b": 2}"#, #"{"a": 1}, {"b": 2}"#, "1 2"] {
            #expect(!RawJSON.spansOneValue(Array(text.utf8)), "\(text)")
        }
    }

    @Test func decodingKeepsTheTextOfTopLevelFieldsWhenGivenTheMembers() throws {
        struct Body: Decodable {
            let contentState: RawJSON
            let nested: Nested
        }
        struct Nested: Decodable {
            let contentState: RawJSON
        }
        let body = #"{"contentState": {"z": 1, "a": 1.50}, "nested": {"contentState": {"z": 1, "a": 1.50}}}"#
        let decoder = JSONDecoder()
        decoder.userInfo[RawJSON.rawMembersKey] = RawJSON.Members(of: Array(body.utf8))
        let decoded = try decoder.decode(Body.self, from: Data(body.utf8))
        #expect(decoded.contentState.text == #"{"z": 1, "a": 1.50}"#)
        // Deeper fields have no raw text to keep: they are re-encoded.
        #expect(decoded.nested.contentState.text == #"{"a":1.5,"z":1}"#)
    }
}
