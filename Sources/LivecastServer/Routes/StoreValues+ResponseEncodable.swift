import Hummingbird
import LivecastStore

// The store's values that the API answers with as they are, encoded by the request context's encoder.

extension ActivityRecord: ResponseEncodable {}
extension APIKeys.Caller: ResponseEncodable {}
extension APIKeys.Revocation: ResponseEncodable {}
extension Apps.App: ResponseEncodable {}
extension DeliveryLog.Page: ResponseEncodable {}
extension DeliveryReport: ResponseEncodable {}
extension DeviceTokens: ResponseEncodable {}
extension Feeds.Feed: ResponseEncodable {}
extension IdentityKeys.Key: ResponseEncodable {}
extension ScheduledUpdates.Status: ResponseEncodable {}
extension UpdateStatus: ResponseEncodable {}
extension WebhookEndpoint: ResponseEncodable {}
