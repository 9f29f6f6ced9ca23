extension ConsoleTemplates {
    /// `GET /console/dead-letters`: what delivery gave up on, and replay.
    static let deadLetters = #"""
        {{<layout}}{{$main}}
        {{#hasLetters}}
        <div class="table-wrap"><table id="dead-letters">
        <thead><tr><th scope="col">#</th><th scope="col">Update</th><th scope="col">Target</th><th scope="col">Reason</th><th scope="col">Attempts</th><th scope="col">Last try</th><th scope="col">Replay</th></tr></thead>
        <tbody>{{#letters}}<tr id="dead-letter-{{id}}"><td>{{id}}</td><td>{{updateId}} · {{event}}</td><td>{{targetKind}}{{#target}} <code class="id short">{{target}}</code>{{/target}}</td>
        <td>{{reason}}</td><td>{{attempts}}</td><td>{{#lastTry}}{{>time}}{{/lastTry}}</td>
        <td>{{#replayed}}<span class="state state-sent">{{replayOutcome}}</span> {{>time}}{{/replayed}}
        {{^replayed}}{{#canOperate}}<form method="post" action="/console/dead-letters/{{id}}/replay"><input type="hidden" name="csrf" value="{{csrf}}">
        <button type="submit" class="small">Replay</button></form>{{/canOperate}}{{^canOperate}}<span class="muted">operator key needed</span>{{/canOperate}}{{/replayed}}</td></tr>{{/letters}}</tbody>
        </table></div>
        {{#next}}<p><a href="/console/dead-letters?after={{next}}" rel="next">Next page</a></p>{{/next}}
        {{/hasLetters}}
        {{^hasLetters}}<p class="empty card">No dead letters: every push Livecast gave up on would be listed here, to replay once
        what stopped it (a key, a certificate, APNs' outage) is fixed.</p>{{/hasLetters}}
        {{/main}}{{/layout}}
        """#

    /// `GET /console/keys` (admin): the app's API keys.
    static let keys = #"""
        {{<layout}}{{$main}}
        {{#cancelSendsOf}}<form method="post" action="/console/keys/{{keyId}}/revoke" class="card inline-form">
        <input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="cancelScheduledSends" value="true">
        <span>Were the key's sends not wanted (a leaked key)?</span><button type="submit" id="cancel-scheduled-sends" class="danger small">Cancel its scheduled sends</button>
        </form>{{/cancelSendsOf}}
        {{#createdKey}}<section class="card result" role="status"><h2>New {{role}} key</h2>
        <p>Copy it now: Livecast keeps only its hash and will not show it again.</p><p>{{>copy}}</p></section>{{/createdKey}}
        <form method="post" action="/console/keys" class="card inline-form" aria-labelledby="new-key-title">
        <h2 id="new-key-title">Create a key</h2>
        <input type="hidden" name="csrf" value="{{csrf}}">
        <label for="role">Role</label>
        <select id="role" name="role"><option value="client">client</option><option value="backend" selected>backend</option><option value="operator">operator</option><option value="admin">admin</option></select>
        <button type="submit" id="create-key">Create</button>
        </form>
        <div class="table-wrap"><table id="keys">
        <thead><tr><th scope="col">#</th><th scope="col">Role</th><th scope="col">Prefix</th><th scope="col">Created</th><th scope="col">State</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
        <tbody>{{#keyList}}<tr id="key-{{keyId}}"><td>{{keyId}}</td><td>{{role}}</td><td><code>lc_{{prefix}}_…</code></td><td>{{#created}}{{>time}}{{/created}}</td>
        <td>{{#revoked}}<span class="state state-failed">revoked</span> {{>time}}{{/revoked}}{{^revoked}}<span class="state state-active">active</span>{{#isSelf}} (this session){{/isSelf}}{{/revoked}}</td>
        <td>{{^revoked}}<form method="post" action="/console/keys/{{keyId}}/revoke" class="inline-form"><input type="hidden" name="csrf" value="{{csrf}}">
        <label class="check"><input type="checkbox" name="cancelScheduledSends" value="true">and cancel its scheduled sends</label>
        <button type="submit" class="danger small">Revoke</button></form>{{/revoked}}</td></tr>{{/keyList}}</tbody>
        </table></div>
        {{/main}}{{/layout}}
        """#
}
