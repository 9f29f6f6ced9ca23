extension ConsoleTemplates {
    /// `GET /console/delivery-report`: Apple's figures beside Livecast's over the last 30 days. The charts are SVG
    /// made by ``DeliveryChart``, which escapes every text, so they are inserted unescaped.
    static let deliveryReport = #"""
        {{<layout}}{{$main}}
        <p class="muted">{{from}} to {{to}} (UTC). Apple publishes each day's figures the next day; Livecast fetches
        them with the app's data-export credentials ({{#through}}through {{through}}{{/through}}{{^through}}none fetched yet{{/through}}).</p>
        {{^exported}}<p class="empty card">No figures from Apple yet: store the app's CloudKit data-export token with
        <code>PUT /v1/apps/{bundleId}/apple-metrics/credentials</code> or <code>livecast apps apple-metrics</code>.</p>{{/exported}}
        {{#hasFailing}}<section class="card" aria-labelledby="failing-title"><h2 id="failing-title">Exports failing</h2>
        <ul id="export-failures">{{#failing}}<li><strong>{{dataset}}</strong>{{#channel}} <code class="id short">{{channel}}</code>{{/channel}}:
        <span class="reason">{{error}}</span>{{#at}} ({{>time}}){{/at}}</li>{{/failing}}</ul></section>{{/hasFailing}}
        <section class="card" aria-labelledby="total-title"><h2 id="total-title">All pushes</h2>
        <p class="hint">Device pushes APNs accepted plus each accepted broadcast times Apple's subscriptions, beside what
        Apple says reached devices.</p>
        {{{totalChart}}}
        </section>
        {{#channelCharts}}<section class="card channel-chart"><h2>{{label}}</h2>
        {{{svg}}}
        </section>{{/channelCharts}}
        <section class="card" aria-labelledby="flagged-title"><h2 id="flagged-title">Flagged days</h2>
        {{#hasFlaggedDays}}<div class="table-wrap"><table id="flagged-days"><thead><tr><th scope="col">Day</th><th scope="col">What</th><th scope="col">Why</th></tr></thead>
        <tbody>{{#flaggedDays}}<tr><td>{{day}}</td><td>{{subject}}</td><td>{{reason}}</td></tr>{{/flaggedDays}}</tbody></table></div>{{/hasFlaggedDays}}
        {{^hasFlaggedDays}}<p class="muted">None: Apple's figures match Livecast's on every day it reports.</p>{{/hasFlaggedDays}}
        {{#hasWithheld}}<p class="muted" id="withheld">Too few subscribers for Apple to show figures:
        {{#withheld}}<span>{{subject}} on {{day}}</span> {{/withheld}}</p>{{/hasWithheld}}
        </section>
        {{/main}}{{/layout}}
        """#
}
