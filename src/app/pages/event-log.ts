import { html } from 'hono/html';
import type { DeliveryView, EventView, WebhookView } from '../../sites/index.js';
import { timeOf, type Html } from '../layout.js';

/** The audit log and webhook deliveries as the app shows them (docs/audit-log.md, docs/webhooks.md). */

/** The facts of an event in a few words: `number 3 · email ada@example.com`. */
function detailsOf(event: EventView): string {
  return Object.entries(event.details)
    .map(([key, value]) => `${key.replace(/_/g, ' ')} ${String(value)}`)
    .join(' · ');
}

/** A table of events, newest first, with a link to older ones. */
export function eventTable(label: string, events: readonly EventView[], olderHref: string | undefined, showSite: boolean): Html {
  if (events.length === 0) return html`<p>Nothing recorded yet.</p>`;
  const rows = events.map(
    (event) => html`<tr>
  <th scope="row"><code>${event.kind}</code></th>
  <td data-label="When">${timeOf(event.at)}</td>
  <td data-label="Who">${event.actor}</td>
  ${showSite ? html`<td data-label="Site">${event.site ?? '—'}</td>` : ''}
  <td data-label="Details">${detailsOf(event)}</td>
</tr>`,
  );
  return html`<div class="table-wrap" role="region" tabindex="0" aria-label="${label}">
<table class="stack-table">
  <caption class="visually-hidden">${label}</caption>
  <thead><tr><th scope="col">What</th><th scope="col">When</th><th scope="col">Who</th>${showSite ? html`<th scope="col">Site</th>` : ''}<th scope="col">Details</th></tr></thead>
  <tbody>${rows}</tbody>
</table></div>
${olderHref ? html`<p><a href="${olderHref}">Older events</a></p>` : ''}`;
}

function disabledWhy(webhook: WebhookView): string {
  return webhook.disabled_for === 'claim'
    ? 'when the site was claimed: the site token registered it, and reaches nothing after the claim'
    : `after ${webhook.failures} deliveries in a row failed`;
}

/** A site's webhooks, each with its latest deliveries. */
export function webhookTables(siteName: string, hooks: ReadonlyArray<{ webhook: WebhookView; deliveries: readonly DeliveryView[] }>): Html {
  if (hooks.length === 0) {
    return html`<p>No webhooks. An owner adds one with <code>POST /v1/sites/${siteName}/webhooks</code>, as the webhooks guide describes.</p>`;
  }
  return html`${hooks.map(
    ({ webhook, deliveries }) => html`<h3>${webhook.url}</h3>
<p>${webhook.state === 'disabled' ? html`<strong>Disabled</strong> ${timeOf(webhook.disabled_at)} ${disabledWhy(webhook)}; nothing more is sent.` : 'Active'} · events: ${webhook.events.join(', ')}</p>
${
  deliveries.length === 0
    ? html`<p>No deliveries yet.</p>`
    : html`<div class="table-wrap" role="region" tabindex="0" aria-label="Deliveries to ${webhook.url}">
<table class="stack-table">
  <caption class="visually-hidden">Deliveries to ${webhook.url}, newest first</caption>
  <thead><tr><th scope="col">Event</th><th scope="col">When</th><th scope="col">State</th><th scope="col">Attempts</th><th scope="col">Last answer</th></tr></thead>
  <tbody>${deliveries.map(
    (delivery) => html`<tr>
  <th scope="row"><code>${delivery.event}</code></th>
  <td data-label="When">${timeOf(delivery.created_at)}</td>
  <td data-label="State">${delivery.state}${delivery.next_attempt_at ? html`, next ${timeOf(delivery.next_attempt_at)}` : ''}</td>
  <td data-label="Attempts">${delivery.attempts}</td>
  <td data-label="Last answer">${delivery.last_status ?? delivery.last_error ?? '—'}</td>
</tr>`,
  )}</tbody>
</table></div>`
}`,
  )}`;
}
