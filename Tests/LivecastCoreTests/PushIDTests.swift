import Foundation
import LivecastCore
import Testing

/// The `apns-id` that names a push's update and target.
@Suite struct PushIDTests {
    @Test(arguments: [
        (Int64(1), PushID.TargetKind.activity, Int64(1)),
        (4_711, .pushToStart, 987_654_321),
        (PushID.maximumUpdateID, .channel, PushID.maximumTargetID),
        (0x0123_4567_89AB_CD, .activity, 0x3FED_CBA9_8765_4321),
    ])
    func anIDReadsBackAsItsUpdateAndTarget(updateID: Int64, kind: PushID.TargetKind, targetID: Int64) throws {
        let id = try #require(PushID(updateID: updateID, targetKind: kind, targetID: targetID))
        let text = id.uuidString
        #expect(text == text.lowercased())
        // A canonical UUID of version 8 with RFC 9562's variant, as APNs wants.
        let uuid = try #require(UUID(uuidString: text))
        #expect(uuid.uuidString.lowercased() == text)
        #expect(Array(text)[14] == "8")
        #expect("89ab".contains(Array(text)[19]))
        let read = try #require(PushID(text))
        #expect(read == id)
        #expect(PushID(text.uppercased()) == id)
    }

    @Test func distinctPushesGetDistinctIDs() throws {
        var seen = Set<String>()
        for updateID in Int64(1)...20 {
            for kind in PushID.TargetKind.allCases {
                for targetID in Int64(1)...20 {
                    seen.insert(try #require(PushID(updateID: updateID, targetKind: kind, targetID: targetID)).uuidString)
                }
            }
        }
        #expect(seen.count == 20 * PushID.TargetKind.allCases.count * 20)
    }

    @Test func idsOutOfRangeAndForeignTextAreRefused() {
        #expect(PushID(updateID: -1, targetKind: .activity, targetID: 1) == nil)
        #expect(PushID(updateID: PushID.maximumUpdateID + 1, targetKind: .activity, targetID: 1) == nil)
        #expect(PushID(updateID: 1, targetKind: .activity, targetID: PushID.maximumTargetID + 1) == nil)
        // APNs' own ids are of version 4; a version-8 id with an unknown kind; malformed text.
        for text in [
            "3f0c1d2e-4b5a-4c6d-8e7f-0123456789ab", "00000000-0000-8f00-8000-000000000001", "not-a-uuid",
            "00000000-0000-8100-8000-00000000000", "00000000-0000-8100-8000-0000000000011", "00000000x0000-8100-8000-000000000001",
            "00000000-0000-8100-c000-000000000001",
        ] {
            #expect(PushID(text) == nil, "\(text)")
        }
    }
}
