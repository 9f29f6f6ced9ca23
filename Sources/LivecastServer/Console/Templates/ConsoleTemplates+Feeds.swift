extension ConsoleTemplates {
    /// `GET /console/feeds`.
    static let feeds = #"""
        {{<layout}}{{$main}}
        {{#hasFeeds}}
        <div class="table-wrap"><table>
        <caption class="visually-hidden">Feeds</caption>
        <thead><tr><th scope="col">Feed</th><th scope="col">State</th><th scope="col">Type</th><th scope="col">Followers (token / channel)</th><th scope="col">Channel</th><th scope="col">Last update</th><th scope="col">Starts (sent / no token back)</th></tr></thead>
        <tbody>
        {{#feeds}}<tr>
        <td><a href="/console/feeds/{{path}}">{{feedKey}}</a></td>
        <td><span class="state state-{{state}}">{{state}}</span></td>
        <td>{{attributesType}}</td>
        <td>{{tokenFollowers}} / {{channelFollowers}}</td>
        <td>{{#channelId}}<code class="id short">{{channelId}}</code>{{/channelId}}{{^channelId}}—{{/channelId}}</td>
        <td>{{#last}}{{event}} · {{status}} · {{#accepted}}{{>time}}{{/accepted}}{{/last}}{{^last}}none{{/last}}</td>
        <td>{{startsSent}} / {{startsUnregistered}}</td>
        </tr>{{/feeds}}
        </tbody></table></div>
        {{#next}}<p><a href="/console/feeds?after={{next}}" rel="next">Next page</a></p>{{/next}}
        {{/hasFeeds}}
        {{^hasFeeds}}<div class="empty card"><p>No feeds yet.</p>
        <p class="muted">A feed is one live event (a game, an order). Create one with
        <code>PUT /v1/apps/{{session.bundleId}}/feeds/{feedKey}</code> and an operator key, then post its start, updates and end.</p></div>{{/hasFeeds}}
        {{/main}}{{/layout}}
        """#

    /// `GET /console/feeds/{feedKey}`: the feed, its followers and history, with live progress of updates being sent.
    static let feed = #"""
        {{<layout}}{{$main}}
        <section class="card">
        <dl class="facts">
        <dt>State</dt><dd><span class="state state-{{feed.state}}">{{feed.state}}</span></dd>
        <dt>Attributes type</dt><dd>{{feed.attributesType}}</dd>
        <dt>Channel</dt><dd>{{#feed.channel}}{{>copy}}{{/feed.channel}}{{^feed.channel}}none: token followers only{{/feed.channel}}</dd>
        <dt>Followers</dt><dd><span id="token-followers">{{feed.tokenFollowers}}</span> by token · <span id="channel-followers">{{feed.channelFollowers}}</span> by channel</dd>
        <dt>Starts</dt><dd>{{feed.startsSent}} sent · {{feed.startsUnregistered}} with no activity registered back{{#feed.startsConfirmed}}
        · <span id="start-confirmation">{{feed.startsConfirmed}} confirmed in time</span>{{/feed.startsConfirmed}}
        {{#feed.startsDeferred}} · {{feed.startsDeferred}} waited for the device's push-to-start budget, {{feed.startsDropped}} of them dropped{{/feed.startsDeferred}}</dd>
        <dt>Renewal</dt><dd>{{#feed.renewal}}{{before}} before the activity lifetime, if updated within {{ifUpdatedWithin}}{{/feed.renewal}}{{^feed.renewal}}none: activities end with their lifetime{{/feed.renewal}}</dd>
        {{#feed.lastTimestamp}}<dt>Last timestamp</dt><dd>{{#feed.lastTime}}{{>time}}{{/feed.lastTime}}</dd>{{/feed.lastTimestamp}}
        </dl>
        </section>
        <section class="card" aria-labelledby="history-title">
        <h2 id="history-title">Updates, newest first</h2>
        {{#hasUpdates}}
        <ol class="updates">
        {{#updates}}<li class="update" id="update-{{updateId}}">
        <div class="update-head"><strong>{{event}}</strong> · update {{updateId}} · <span class="state state-{{status}}" data-field="status">{{status}}</span> · timestamp {{#time}}{{>time}}{{/time}}</div>
        <div class="progress" {{#live}}data-progress="/console/updates/{{updateId}}/progress"{{/live}}>
        <progress max="100" value="{{percent}}" aria-label="Update {{updateId}} sent">{{percent}}%</progress>
        <span data-field="summary">{{percent}}% · {{sent}} sent · {{failed}} failed · {{pending}} pending{{#superseded}} · {{superseded}} superseded{{/superseded}}</span>
        <ul class="reasons" data-field="reasons">{{#reasons}}<li><a href="/console/deliveries?updateId={{updateId}}&amp;reason={{reason}}">{{reason}}</a>: {{count}}</li>{{/reasons}}</ul>
        </div>
        </li>{{/updates}}
        </ol>
        {{#next}}<p><a href="/console/feeds/{{feed.path}}?before={{next}}" rel="next">Older updates</a></p>{{/next}}
        {{/hasUpdates}}
        {{^hasUpdates}}<p class="empty muted">No updates yet. Post the feed's start, updates and end to
        <code>/v1/apps/{{session.bundleId}}/feeds/{{feed.feedKey}}/start</code>, <code>…/updates</code> and <code>…/end</code>.</p>{{/hasUpdates}}
        </section>
        {{/main}}{{/layout}}
        """#
}
