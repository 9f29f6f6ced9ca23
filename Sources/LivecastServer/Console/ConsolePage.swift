import HTTPTypes
import LivecastStore

/// A console page to render: its template, its title and section in the navigation, and what the template shows.
struct ConsolePage {
    /// The console's sections, in the navigation's order.
    enum Section: String, CaseIterable {
        case overview, feeds, channels, deliveries, deliveryReport, deadLetters, webhooks, keys

        var label: String {
            switch self {
            case .overview: "Overview"
            case .feeds: "Feeds"
            case .channels: "Channels"
            case .deliveries: "Deliveries"
            case .deliveryReport: "Apple's figures"
            case .deadLetters: "Dead letters"
            case .webhooks: "Webhooks"
            case .keys: "Keys"
            }
        }

        /// The least role whose key sees the section in the navigation: webhooks are an operator's, keys an
        /// admin's.
        var role: APIKeys.Role {
            switch self {
            case .webhooks: .operator
            case .keys: .admin
            default: .backend
            }
        }

        var path: String {
            switch self {
            case .overview: "/console"
            case .feeds: "/console/feeds"
            case .channels: "/console/channels"
            case .deliveries: "/console/deliveries"
            case .deliveryReport: "/console/delivery-report"
            case .deadLetters: "/console/dead-letters"
            case .webhooks: "/console/webhooks"
            case .keys: "/console/keys"
            }
        }
    }

    /// The template's name in ``ConsoleTemplates``.
    var template: String
    var title: String
    var section: Section?
    /// What the template shows; keys with no value are left out (a present key is a true section).
    var model: [String: Any] = [:]
    var status: HTTPResponse.Status = .ok
    /// A message of success at the top of the page.
    var notice: String?
    /// What went wrong, as the API said it (`code`, `message`).
    var error: (code: String, message: String)?
    /// When to try again (`Retry-After`), as the API said it with its refusal.
    var retryAfter: String?

    /// A page that only says what went wrong, with its status.
    static func problem(_ status: HTTPResponse.Status, code: String, message: String, title: String? = nil) -> ConsolePage {
        var page = ConsolePage(template: "problem", title: title ?? (status == .forbidden ? "Not allowed" : "Something went wrong"), section: nil)
        page.status = status
        page.error = (code, message)
        return page
    }

    /// A form posted without a live session (never signed in, signed out, expired, or its key revoked): `403`.
    static var signedOut: ConsolePage {
        .problem(
            .forbidden,
            code: "csrf_token_missing",
            message: "this form was sent without a live session (it ended, or was never opened): sign in and send it again",
            title: "Not signed in"
        )
    }

    /// The page of an API refusal, with the API's status, code and message.
    static func refusal(_ answer: InProcessAPI.Answer, title: String, section: Section?) -> ConsolePage {
        var page = ConsolePage(template: "problem", title: title, section: section)
        page.status = answer.status
        page.error = answer.error
        page.retryAfter = answer.retryAfter
        return page
    }
}
