extension ConsoleTemplates {
    /// `GET /console/webhooks`: the app's webhook endpoints and how their deliveries go (read-only; the API and
    /// `livecast webhooks` manage them).
    static let webhooks = #"""
        {{<layout}}{{$main}}
        {{#hasEndpoints}}
        <div class="table-wrap"><table id="webhooks">
        <thead><tr><th scope="col">Endpoint</th><th scope="col">Events</th><th scope="col">State</th><th scope="col">Pending</th><th scope="col">Oldest pending</th><th scope="col">Failures in a row</th><th scope="col">Last success</th><th scope="col">Last failure</th><th scope="col">Failed</th></tr></thead>
        <tbody>{{#endpoints}}<tr id="webhook-{{id}}"><td><code class="id short" title="{{id}}">{{url}}</code></td><td>{{eventList}}</td>
        <td>{{#enabled}}<span class="state state-active">enabled</span>{{/enabled}}{{^enabled}}<span class="state state-failed">disabled</span>{{/enabled}}</td>
        <td>{{pending}}</td><td>{{#oldestPendingAge}}{{oldestPendingAge}}{{/oldestPendingAge}}{{^oldestPendingAge}}<span class="muted">none</span>{{/oldestPendingAge}}</td>
        <td>{{consecutiveFailures}}</td><td>{{#lastSuccess}}{{>time}}{{/lastSuccess}}{{^lastSuccess}}<span class="muted">never</span>{{/lastSuccess}}</td>
        <td>{{#lastFailure}}{{>time}}{{/lastFailure}}{{#lastFailureReason}} <span class="reason">{{lastFailureReason}}</span>{{/lastFailureReason}}{{^lastFailure}}<span class="muted">never</span>{{/lastFailure}}</td>
        <td>{{failed}}</td></tr>{{/endpoints}}</tbody>
        </table></div>
        <p class="hint">Failed deliveries are replayed with <code>POST …/webhooks/{id}/failed:replay</code> or <code>livecast webhooks replay</code>.</p>
        {{/hasEndpoints}}
        {{^hasEndpoints}}<p class="empty card">No webhook endpoints: add one with <code>POST /v1/apps/{bundleId}/webhooks</code> or
        <code>livecast webhooks add</code>, and the app's events are POSTed to it as they happen.</p>{{/hasEndpoints}}
        {{/main}}{{/layout}}
        """#
}
