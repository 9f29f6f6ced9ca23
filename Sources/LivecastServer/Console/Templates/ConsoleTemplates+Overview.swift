extension ConsoleTemplates {
    /// `GET /console`: the app at a glance.
    static let overview = #"""
        {{<layout}}{{$main}}
        <section class="grid" aria-label="At a glance">
        <div class="card"><h2>App</h2><p class="big name">{{app.bundleId}}</p><p class="muted">{{app.environment}} environment</p></div>
        <div class="card"><h2>Outbox</h2><p class="big" id="outbox-depth">{{outbox.depth}}</p>
        <p class="muted">{{#outbox.oldest}}oldest waiting {{outbox.oldest}}{{/outbox.oldest}}{{^outbox.oldest}}nothing waiting{{/outbox.oldest}} · {{outbox.scheduled}} scheduled</p></div>
        <div class="card"><h2>Dead letters</h2><p class="big"><a href="/console/dead-letters" id="dead-letter-count">{{deadLetters}}</a></p>
        <p class="muted">pushes given up on, waiting for a replay</p></div>
        <div class="card"><h2>Channels</h2>
        <svg class="gauge" viewBox="0 0 200 14" role="img" aria-label="{{channels.used}} of {{channels.limit}} channels used">
        <rect class="track" width="200" height="14" rx="7"></rect><rect class="fill" width="{{channels.width}}" height="14" rx="7"></rect></svg>
        <p class="muted">{{channels.used}} of APNs' {{channels.limit}} ({{channels.percent}})</p></div>
        </section>
        <section class="card" aria-labelledby="pushes-title">
        <h2 id="pushes-title">Pushes in the last hour</h2>
        <p><span class="dot sent"></span> {{pushes.sent}} accepted by APNs · <span class="dot failed"></span> {{pushes.failed}} failed</p>
        <svg class="chart" viewBox="0 0 360 130" role="img" aria-label="Pushes per five minutes: {{pushes.sent}} accepted, {{pushes.failed}} failed">
        <line class="axis" x1="0" y1="110" x2="360" y2="110"></line>
        {{#pushes.bars}}<g><title>{{label}}: {{sent}} accepted, {{failed}} failed</title>
        <rect class="sent" x="{{x}}" y="{{sentY}}" width="24" height="{{sentHeight}}"></rect>
        <rect class="failed" x="{{x}}" y="{{failedY}}" width="24" height="{{failedHeight}}"></rect></g>{{/pushes.bars}}
        <text x="0" y="126">{{pushes.from}}</text><text x="360" y="126" text-anchor="end">now</text>
        </svg>
        {{#pushes.hasReasons}}<h3>Failures by reason</h3>{{/pushes.hasReasons}}
        <ul class="reasons">{{#pushes.reasons}}<li><a href="/console/deliveries?reason={{reason}}">{{reason}}</a>: {{count}}</li>{{/pushes.reasons}}</ul>
        </section>
        <section class="grid">
        <div class="card"><h2>Reaper</h2>{{#reaper.at}}<p>Last pass {{>time}}</p><p class="muted">{{reaper.summary}}</p>{{/reaper.at}}
        {{^reaper.at}}<p class="muted">It has not passed over this app yet: <code>livecast serve</code> runs it every few minutes.</p>{{/reaper.at}}</div>
        <div class="card"><h2>Starts confirmed</h2>{{#starts.ratio}}
        <svg class="gauge" viewBox="0 0 200 14" role="img" aria-label="{{starts.ratio}} of starts confirmed">
        <rect class="track" width="200" height="14" rx="7"></rect><rect class="fill{{#starts.low}} low{{/starts.low}}" width="{{starts.width}}" height="14" rx="7"></rect></svg>
        <p id="start-confirmation">{{starts.ratio}} of {{starts.due}} starts of the last day were reported by the app in time</p>{{/starts.ratio}}
        {{^starts.ratio}}<p class="muted" id="start-confirmation">{{starts.sent}} starts in the last day; none past its registration timeout yet.</p>{{/starts.ratio}}
        <p class="muted">APNs answers 200 to a start a device drops: a low share means starts lost on the devices.</p></div>
        <div class="card"><h2>Health</h2>{{#hasProblems}}<ul class="problems">{{#problems}}<li>{{.}}</li>{{/problems}}</ul>{{/hasProblems}}
        {{^hasProblems}}<p class="ok">Nothing is wrong: the database answers, migrations are applied, the dispatcher runs.</p>{{/hasProblems}}</div>
        </section>
        <section class="grid">
        <form class="card" method="get" action="/console/activities"><h2><label for="activityId">Open an activity</label></h2>
        <input id="activityId" name="activityId" required placeholder="activity id"> <button type="submit">Open</button></form>
        <form class="card" method="get" action="/console/devices"><h2><label for="deviceId">Open a device</label></h2>
        <input id="deviceId" name="deviceId" required placeholder="device id"> <button type="submit">Open</button></form>
        </section>
        {{/main}}{{/layout}}
        """#
}
