/// The console's Mustache templates, compiled into the binary (nothing is read from disk or fetched at run time).
/// Each page fills the layout's `main` block; values are HTML-escaped by Mustache.
enum ConsoleTemplates {
    /// Every template by name.
    static let all: [(String, String)] = [
        ("layout", layout),
        ("time", time),
        ("copy", copy),
        ("login", login),
        ("problem", problem),
        ("overview", overview),
        ("feeds", feeds),
        ("feed", feed),
        ("channels", channels),
        ("activity", activity),
        ("device", device),
        ("deliveries", deliveries),
        ("deadLetters", deadLetters),
        ("webhooks", webhooks),
        ("deliveryReport", deliveryReport),
        ("keys", keys),
    ]

    /// The frame of every page: the navigation, the signed-in key and sign-out, the title, notices and errors.
    static let layout = #"""
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="color-scheme" content="light dark">
        <title>{{pageTitle}} · Livecast</title>
        <link rel="icon" href="/console/assets/favicon.svg" type="image/svg+xml">
        <link rel="stylesheet" href="/console/assets/console.css">
        <script src="/console/assets/console.js" defer></script>
        </head>
        <body>
        <a class="skip" href="#main">Skip to content</a>
        <header class="top">
        <a class="brand" href="/console">Livecast</a>
        {{#session}}
        <nav aria-label="Sections"><ul>{{#nav}}<li><a href="{{href}}"{{#current}} aria-current="page"{{/current}}>{{label}}</a></li>{{/nav}}</ul></nav>
        <div class="who">
        <span class="app" title="The app of the signed-in key">{{bundleId}}</span>
        <span class="role">{{role}}</span>
        <form method="post" action="/console/logout"><input type="hidden" name="csrf" value="{{csrf}}"><button type="submit" class="link" id="sign-out">Sign out</button></form>
        </div>
        {{/session}}
        </header>
        <main id="main" tabindex="-1">
        <h1>{{pageTitle}}</h1>
        {{#notice}}<p class="notice" role="status">{{notice}}</p>{{/notice}}
        {{#problem}}<p class="problem" role="alert"><strong>{{code}}</strong> {{message}}</p>{{/problem}}
        {{$main}}{{/main}}
        </main>
        </body>
        </html>
        """#

    /// A moment (`iso`, `text` in UTC), shown in the viewer's time zone by the script.
    static let time = #"<time datetime="{{iso}}">{{text}}</time>"#

    /// An identifier (`id`) in code type, with a button that copies it (shown by the script).
    static let copy =
        #"<code class="id">{{id}}</code><button type="button" class="copy" data-copy="{{id}}" hidden aria-label="Copy {{id}}">Copy</button>"#

    /// `GET /console/login`.
    static let login = #"""
        {{<layout}}{{$main}}
        <form method="post" action="/console/login" class="card narrow">
        <input type="hidden" name="csrf" value="{{loginCsrf}}">
        <input type="hidden" name="next" value="{{next}}">
        <label for="key">API key</label>
        <input id="key" name="key" type="password" autocomplete="current-password" required placeholder="lc_…" autofocus>
        <p class="hint">A backend key reads; an operator key also runs feeds, channels and dead letters; an admin key also
        manages keys. The key is checked once, here: the browser keeps only a session cookie.</p>
        <button type="submit">Sign in</button>
        </form>
        {{/main}}{{/layout}}
        """#

    /// A page that only says what went wrong (the layout shows the problem).
    static let problem = #"""
        {{<layout}}{{$main}}
        <p>{{#session}}<a href="/console">Back to the overview</a>{{/session}}{{^session}}<a href="/console/login">Sign in</a>{{/session}}</p>
        {{/main}}{{/layout}}
        """#
}
