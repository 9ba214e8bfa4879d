import { html } from 'hono/html';
import { isSiteNameSyntax } from '../../rules/index.js';
import { REPORT_REASONS } from '../../sites/index.js';
import { messagePage, page, redirectWithFlash, type AppDeps, type PageContext, type PageRoute } from '../context.js';
import { csrfField, errorSummary, fieldError, invalidAttrs, type FieldError } from '../layout.js';
import { formOf } from '../request.js';
import type { AppResponse } from '../response.js';

const REASON_LABELS: Record<(typeof REPORT_REASONS)[number], string> = {
  phishing: 'Phishing: it pretends to be someone else to get passwords or payment details',
  malware: 'Malware: it spreads harmful software',
  spam: 'Spam or scam',
  copyright: 'Copyright: it uses my work without permission',
  other: 'Something else',
};

/** `/report/<name>`: anyone (no sign-in) reports a site; linked from the badge. */
export function reportRoutes(deps: AppDeps): PageRoute[] {
  const { ops, config } = deps;

  function form(context: PageContext, name: string, values: Record<string, string>, errors: FieldError[], status = 200): AppResponse {
    const url = config.publicUrls.site.replace('{name}', name);
    return page(
      context,
      {
        title: `Report ${name}`,
        body: html`${errorSummary(errors)}
<h1>Report a site</h1>
<p>Tell us what is wrong with <strong>${url}</strong>. Our operators review every report. You do not need an account.</p>
<form method="post" action="/report/${name}" novalidate>
  ${csrfField(context.formToken)}
  <fieldset class="field" ${invalidAttrs(errors, 'reason')}>
    <legend>What is wrong with the site?</legend>
    ${fieldError(errors, 'reason')}
    ${REPORT_REASONS.map(
      (reason, index) => html`<div class="radio">
      <input type="radio" id="${index === 0 ? 'reason' : `reason-${reason}`}" name="reason" value="${reason}" ${values.reason === reason ? html`checked` : ''}>
      <label for="${index === 0 ? 'reason' : `reason-${reason}`}">${REASON_LABELS[reason]}</label>
    </div>`,
    )}
  </fieldset>
  <div class="field">
    <label for="details">Details</label>
    <p class="hint" id="details-hint">What you saw, and where on the site. Up to 5000 characters.</p>
    ${fieldError(errors, 'details')}
    <textarea id="details" name="details" rows="6" maxlength="5000" aria-describedby="details-hint" ${invalidAttrs(errors, 'details')}>${values.details ?? ''}</textarea>
  </div>
  <div class="field">
    <label for="contact">Your e-mail address (optional)</label>
    <p class="hint" id="contact-hint">Only if you want a receipt, or we may write to you about it.</p>
    ${fieldError(errors, 'contact')}
    <input id="contact" name="contact" type="email" autocomplete="email" spellcheck="false" value="${values.contact ?? ''}" aria-describedby="contact-hint" ${invalidAttrs(errors, 'contact')}>
  </div>
  <button type="submit">Send report</button>
</form>`,
      },
      status,
    );
  }

  return [
    {
      method: 'GET',
      path: '/report/{name}',
      async handle(context) {
        const name = context.request.params[0]!;
        // Whatever the address holds is shown as a site's name only if it could be one.
        if (!isSiteNameSyntax(name)) return messagePage(context, 404, 'No such site', html`<p>There is no site with that name.</p>`);
        return form(context, name, {}, []);
      },
    },
    {
      // After a report: what was received comes in the flash cookie, never from the address.
      method: 'GET',
      path: '/report/{name}/sent',
      async handle(context) {
        const received = context.flash?.notice ?? 'We received your report.';
        return messagePage(context, 200, 'Thank you for your report', html`<p>${received} Our operators will review it.</p>`);
      },
    },
    {
      method: 'POST',
      path: '/report/{name}',
      async handle(context) {
        const name = context.request.params[0]!;
        const fields = formOf(context.request);
        const values = { reason: fields.get('reason') ?? '', details: fields.get('details') ?? '', contact: fields.get('contact') ?? '' };
        try {
          const report = await ops.reports.create({ site: name, ...values, network: context.network });
          return redirectWithFlash(context, `/report/${encodeURIComponent(name)}/sent`, {
            notice: `We received your report about ${report.site} (number ${report.id}).`,
          });
        } catch (err) {
          const error = err as { code?: string; message: string; details?: { field?: string } };
          if (error.code === 'not_found') return messagePage(context, 404, 'No such site', html`<p>There is no site with that name.</p>`);
          if (error.code === 'bad_request' && error.details?.field)
            return form(context, name, values, [{ field: error.details.field, message: error.message }], 400);
          if (error.code === 'limit') return form(context, name, values, [{ field: 'details', message: error.message }], 429);
          throw err;
        }
      },
    },
  ];
}
