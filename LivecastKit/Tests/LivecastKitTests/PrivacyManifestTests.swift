import Foundation
import Testing

@testable import LivecastKit

/// The privacy manifest the package ships (Xcode merges it into the app's privacy report) declares what LivecastKit
/// collects: the device id, linked to the user (it is, once the app calls `identify`), and the user id; no tracking.
@Suite struct PrivacyManifestTests {
    @Test func theDeviceIDIsDeclaredLinkedToTheUser() throws {
        let url = try #require(Bundle.module.url(forResource: "PrivacyInfo", withExtension: "xcprivacy"), "shipped as a resource")
        let manifest = try #require(try PropertyListSerialization.propertyList(from: Data(contentsOf: url), format: nil) as? [String: Any])
        #expect(manifest["NSPrivacyTracking"] as? Bool == false)
        #expect((manifest["NSPrivacyAccessedAPITypes"] as? [Any])?.isEmpty == true)
        let collected = try #require(manifest["NSPrivacyCollectedDataTypes"] as? [[String: Any]])
        let byType = Dictionary(
            uniqueKeysWithValues: collected.compactMap { entry in
                (entry["NSPrivacyCollectedDataType"] as? String).map { ($0, entry) }
            }
        )
        #expect(Set(byType.keys) == ["NSPrivacyCollectedDataTypeDeviceID", "NSPrivacyCollectedDataTypeUserID"])
        for (type, entry) in byType {
            #expect(entry["NSPrivacyCollectedDataTypeLinked"] as? Bool == true, "\(type) is linked to the user")
            #expect(entry["NSPrivacyCollectedDataTypeTracking"] as? Bool == false)
            #expect(entry["NSPrivacyCollectedDataTypePurposes"] as? [String] == ["NSPrivacyCollectedDataTypePurposeAppFunctionality"])
        }
    }
}
