extension ConsoleTemplates {
    /// `GET /console/channels`: Livecast's registry beside APNs' list, create and retire.
    static let channels = #"""
        {{<layout}}{{$main}}
        {{#retireWarning}}<form method="post" action="/console/channels/retire" class="card warning">
        <p>{{message}}</p>
        <input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="channelId" value="{{channelId}}"><input type="hidden" name="force" value="true">
        <button type="submit" class="danger">Retire anyway</button> <a href="/console/channels">Keep it</a>
        </form>{{/retireWarning}}
        {{#created}}<p class="notice" role="status">Created {{>copy}} at APNs and registered it.</p>{{/created}}
        <form method="post" action="/console/channels" class="card inline-form" aria-labelledby="create-title">
        <h2 id="create-title">Create a channel</h2>
        <input type="hidden" name="csrf" value="{{csrf}}">
        <label for="storagePolicy">Storage policy</label>
        <select id="storagePolicy" name="storagePolicy">
        <option value="noStorage">No storage (0): devices listening now</option>
        <option value="mostRecentMessage">Most recent message (1): kept for late subscribers</option>
        </select>
        <label for="feed">Feed (optional)</label>
        <input id="feed" name="feed" placeholder="feed key">
        <button type="submit" id="create-channel">Create</button>
        </form>
        <section class="card" aria-labelledby="registry-title">
        <h2 id="registry-title">Livecast's registry ({{registryCount}})</h2>
        {{#hasRegistry}}
        <div class="table-wrap"><table id="registry">
        <thead><tr><th scope="col">Channel</th><th scope="col">Policy</th><th scope="col">Feed</th><th scope="col">State</th><th scope="col">Followers</th><th scope="col">At APNs</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
        <tbody>{{#registry}}<tr data-channel="{{channelId}}">
        <td>{{>copy}}</td><td>{{storagePolicy}}</td>
        <td>{{#feed}}<a href="/console/feeds/{{feedPath}}">{{feed}}</a>{{/feed}}{{^feed}}—{{/feed}}</td>
        <td><span class="state state-{{state}}">{{state}}</span></td><td>{{followers}}</td>
        <td>{{#atAPNs}}yes{{/atAPNs}}{{^atAPNs}}<span class="mark missing">missing at APNs</span>{{/atAPNs}}</td>
        <td>{{#retirable}}<form method="post" action="/console/channels/retire"><input type="hidden" name="csrf" value="{{csrf}}">
        <input type="hidden" name="channelId" value="{{channelId}}"><button type="submit" class="danger small">Retire</button></form>{{/retirable}}</td>
        </tr>{{/registry}}</tbody></table></div>
        {{/hasRegistry}}
        {{^hasRegistry}}<p class="empty muted">No channels yet. Create one above, or give a feed a channel when you create it.</p>{{/hasRegistry}}
        </section>
        <section class="card" aria-labelledby="apns-title">
        <h2 id="apns-title">APNs' list</h2>
        {{#apnsError}}<p class="problem">{{.}}</p>{{/apnsError}}
        {{#hasOrphans}}<p>Channels APNs has that Livecast does not know (orphans): delete them with
        <code>livecast channels reconcile --delete-orphans</code>.</p>
        <ul class="orphans">{{#orphans}}<li><span class="mark orphan">orphan</span> {{>copy}}</li>{{/orphans}}</ul>{{/hasOrphans}}
        {{^hasOrphans}}{{^apnsError}}<p class="ok">APNs has {{apnsCount}} channel(s), all in Livecast's registry.</p>{{/apnsError}}{{/hasOrphans}}
        </section>
        {{/main}}{{/layout}}
        """#
}
