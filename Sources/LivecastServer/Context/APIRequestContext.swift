import Hummingbird
import LivecastStore

/// The request context of the Livecast API: Hummingbird's core storage plus the caller once its key authenticated.
public struct APIRequestContext: RequestContext {
    /// The largest request body the API reads: 64 KiB, far above any valid request (payloads are at most 5 KiB).
    public static let maximumBodySize = 64 * 1024

    public var coreContext: CoreRequestContextStorage
    /// Who is calling, set by the API-key middleware on `/v1` routes.
    public var caller: APIKeys.Caller?

    public init(source: Source) {
        self.coreContext = .init(source: source)
    }

    public var maxUploadSize: Int { Self.maximumBodySize }
}
