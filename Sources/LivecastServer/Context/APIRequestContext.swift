package import Foundation
package import Hummingbird
import LivecastCore
package import LivecastStore
package import NIOCore

/// The request context of the Livecast API: Hummingbird's core storage, the client's address, and the caller once
/// its key authenticated.
package struct APIRequestContext: RequestContext, RemoteAddressRequestContext {
    /// The largest request body the API reads: 64 KiB, far above any valid request (payloads are at most 5 KiB).
    package static let maximumBodySize = 64 * 1024

    package var coreContext: CoreRequestContextStorage
    /// The connection's peer (`nil` where there is no socket, as under the router test client).
    package let remoteAddress: SocketAddress?
    /// The event loop of the request's connection.
    package let eventLoop: any EventLoop
    /// Who is calling, set by the API-key middleware on `/v1` routes, and by the console's session middleware on
    /// `/console` pages (whose in-process API calls then act as the session's key).
    package var caller: APIKeys.Caller?
    /// The client's address as rate limits key it (``AddressBlock/rateLimitKey(of:)``), set by the API-key middleware
    /// for a client key's request; `nil` when there is none (the router test client).
    package var clientAddress: String?
    /// The signed-in console session of a `/console` page.
    package var consoleSession: ConsoleSessions.Session?

    package init(source: Source) {
        self.coreContext = .init(source: source)
        self.remoteAddress = source.channel.remoteAddress
        self.eventLoop = source.channel.eventLoop
    }

    package var maxUploadSize: Int { Self.maximumBodySize }

    /// Encodes the values handlers answer with: compact JSON, sorted keys, ISO 8601 dates (``JSONEncoder/sorted``).
    package var responseEncoder: JSONEncoder { .sorted }
}
