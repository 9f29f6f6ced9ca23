extension ConsoleTemplates {
    /// `GET /console/activities/{activityId}`: the activity's record and timeline, and a test push.
    static let activity = #"""
        {{<layout}}{{$main}}
        {{#testPush}}<section class="card result" id="test-push-result" role="status">
        <h2>APNs' answer</h2>
        <p><span class="state state-{{outcome}}">{{outcome}}</span>{{#status}} · HTTP {{status}}{{/status}}{{#reason}} · {{reason}}{{/reason}}</p>
        <p>update {{updateId}}{{#apns}} · apns-id {{>copy}}{{/apns}}</p>
        </section>{{/testPush}}
        <section class="card">
        <dl class="facts">
        <dt>Activity</dt><dd>{{#activity.copyID}}{{>copy}}{{/activity.copyID}}</dd>
        <dt>State</dt><dd><span class="state state-{{activity.state}}" id="activity-state">{{activity.state}}</span></dd>
        <dt>Kind</dt><dd>{{activity.kind}}</dd>
        <dt>Attributes type</dt><dd>{{activity.attributesType}}</dd>
        {{#activity.feed}}<dt>Feed</dt><dd><a href="/console/feeds/{{activity.feedPath}}">{{activity.feed}}</a></dd>{{/activity.feed}}
        {{#activity.device}}<dt>Device</dt><dd><a href="/console/devices/{{activity.devicePath}}">{{activity.device}}</a></dd>{{/activity.device}}
        {{#activity.tokenID}}<dt>Update token</dt><dd>{{>copy}}</dd>{{/activity.tokenID}}
        {{#activity.channelID}}<dt>Channel</dt><dd>{{>copy}}</dd>{{/activity.channelID}}
        <dt>Started</dt><dd>{{#activity.started}}{{>time}}{{/activity.started}}</dd>
        {{#activity.ended}}<dt>Ended</dt><dd>{{>time}}</dd>{{/activity.ended}}
        </dl>
        </section>
        <section class="card" aria-labelledby="timeline-title">
        <h2 id="timeline-title">Timeline, oldest first</h2>
        <ol class="timeline">{{#timeline}}<li class="event event-{{type}}">
        <span class="when">{{#at}}{{>time}}{{/at}}</span> <strong>{{label}}</strong>
        {{#detail}}<span class="muted">{{detail}}</span>{{/detail}}
        {{#push}}<span class="push">update {{updateId}} · {{event}} · <span class="state state-{{outcome}}">{{outcome}}</span>{{#status}} · {{status}}{{/status}}{{#reason}} · {{reason}}{{/reason}} · apns-id {{#apns}}{{>copy}}{{/apns}}</span>{{/push}}
        </li>{{/timeline}}</ol>
        </section>
        {{#activity.canPush}}
        <form method="post" action="/console/activities/{{activity.path}}/test-push" class="card" aria-labelledby="test-title">
        <h2 id="test-title">Send a test update</h2>
        <input type="hidden" name="csrf" value="{{csrf}}">
        <label for="contentState">Content state (JSON, as the app's <code>ContentState</code> decodes it)</label>
        <textarea id="contentState" name="contentState" rows="4" required>{{activity.contentState}}</textarea>
        <label for="alertTitle">Alert title (optional)</label>
        <input id="alertTitle" name="alertTitle">
        <button type="submit" id="send-test-push">Send to this activity</button>
        <p class="hint">It goes through the outbox like any update (a new timestamp, ordering, coalescing); the answer APNs gave is shown here.</p>
        </form>
        {{/activity.canPush}}
        {{#activity.feed}}<p class="hint">This activity follows the feed <a href="/console/feeds/{{activity.feedPath}}">{{activity.feed}}</a>: its updates go to the feed.</p>{{/activity.feed}}
        {{/main}}{{/layout}}
        """#

    /// `GET /console/devices/{deviceId}`: a device's push-to-start tokens.
    static let device = #"""
        {{<layout}}{{$main}}
        {{#hasTokens}}
        <div class="table-wrap"><table>
        <thead><tr><th scope="col">Attributes type</th><th scope="col">Token</th><th scope="col">State</th><th scope="col">iOS</th><th scope="col">User</th><th scope="col">Registered</th><th scope="col">Last seen</th></tr></thead>
        <tbody>{{#tokens}}<tr><td>{{attributesType}}</td><td>{{>copy}}</td>
        <td>{{#live}}<span class="state state-active">live</span>{{/live}}{{^live}}<span class="state state-failed">invalidated</span> {{#invalidated}}{{>time}}{{/invalidated}} {{invalidationReason}}{{/live}}</td>
        <td>{{osVersion}}</td><td>{{userId}}</td><td>{{#registered}}{{>time}}{{/registered}}</td><td>{{#lastSeen}}{{>time}}{{/lastSeen}}</td></tr>{{/tokens}}</tbody>
        </table></div>
        {{/hasTokens}}
        {{^hasTokens}}<p class="empty muted">This device has no push-to-start token. Its app registers one with
        <code>PUT /v1/apps/{{session.bundleId}}/push-to-start-tokens/{deviceId}/{attributesType}</code>.</p>{{/hasTokens}}
        {{/main}}{{/layout}}
        """#

    /// `GET /console/deliveries`: the delivery log, searched.
    static let deliveries = #"""
        {{<layout}}{{$main}}
        <form method="get" action="/console/deliveries" class="card search" role="search">
        <div><label for="apnsId">apns-id</label><input id="apnsId" name="apnsId" value="{{query.apnsId}}" placeholder="8-4-4-4-12 hex digits"></div>
        <div><label for="token">Token</label><input id="token" name="token" value="{{query.token}}"></div>
        <div><label for="updateId">Update</label><input id="updateId" name="updateId" value="{{query.updateId}}" inputmode="numeric"></div>
        <div><label for="reason">Reason</label><input id="reason" name="reason" value="{{query.reason}}" placeholder="Unregistered"></div>
        <button type="submit" id="search">Search</button>
        </form>
        {{#searched}}
        {{#hasResults}}
        <div class="table-wrap"><table id="deliveries">
        <thead><tr><th scope="col">apns-id</th><th scope="col">Update</th><th scope="col">Target</th><th scope="col">Outcome</th><th scope="col">When</th></tr></thead>
        <tbody>{{#results}}<tr><td>{{#apns}}{{>copy}}{{/apns}}</td><td>{{updateId}} · {{event}}</td>
        <td>{{targetKind}}{{#activityId}} · <a href="/console/activities/{{activityPath}}">{{activityId}}</a>{{/activityId}}</td>
        <td><span class="state state-{{outcome}}">{{outcome}}</span>{{#status}} {{status}}{{/status}}{{#reason}} {{reason}}{{/reason}}</td>
        <td>{{#when}}{{>time}}{{/when}}</td></tr>{{/results}}</tbody></table></div>
        {{#next}}<p><a href="{{next}}" rel="next">Next page</a></p>{{/next}}
        {{/hasResults}}
        {{^hasResults}}<p class="empty muted">No push matches. Pushes are found within the app's retention window; an apns-id Livecast did not make (APNs' own) finds nothing.</p>{{/hasResults}}
        {{/searched}}
        {{^searched}}<p class="empty muted">Search by the apns-id from Apple's Push Notifications Console or a device log, by a token, by an update id, or by APNs' reason.</p>{{/searched}}
        {{/main}}{{/layout}}
        """#
}
