import { siteUrl } from '../config.js';
import { ServiceError } from '../errors.js';
import type { ReportRecord } from '../store/index.js';
import type { OperationsDeps } from './deps.js';
import { reportNoticeMail, reportReceiptMail } from '../outbound/index.js';
import { parseEmail } from './members.js';
import { cap, HOUR_MS, takeOrRefuse } from './rate.js';

export const REPORT_REASONS = ['phishing', 'malware', 'spam', 'copyright', 'other'] as const;
export type ReportReason = (typeof REPORT_REASONS)[number];
const MAX_DETAILS = 5000;

export interface ReportInput {
  site: string;
  reason: unknown;
  details: unknown;
  contact?: unknown;
  /** Reporter's network, for the per-network cap. */
  network: string;
}

export interface ReportOperations {
  /** Anyone may report a site (linked from the badge); capped per network. */
  create(input: ReportInput): Promise<ReportRecord>;
  list(options?: { status?: ReportRecord['status'] }): ReportRecord[];
  resolve(id: string, note?: string): Promise<ReportRecord>;
}

/** Abuse reports, stored for the operator (`plinth admin report …`). */
export function reportOperations(deps: Pick<OperationsDeps, 'store' | 'config' | 'log' | 'mailer'>): ReportOperations {
  const { store, config, log, mailer } = deps;

  return {
    async create(input) {
      const site = store.getSite(input.site);
      if (!site) throw new ServiceError('not_found', `There is no site named ${input.site}.`, { details: { field: 'site' } });
      if (typeof input.reason !== 'string' || !(REPORT_REASONS as readonly string[]).includes(input.reason)) {
        throw new ServiceError('bad_request', `Choose a reason: ${REPORT_REASONS.join(', ')}.`, { details: { field: 'reason' } });
      }
      const details = typeof input.details === 'string' ? input.details.trim() : '';
      if (details.length > MAX_DETAILS) {
        throw new ServiceError('bad_request', `Details can have at most ${MAX_DETAILS} characters.`, { details: { field: 'details' } });
      }
      const contactRaw = typeof input.contact === 'string' ? input.contact.trim() : '';
      const contact = contactRaw === '' ? undefined : parseEmail(contactRaw, 'contact');
      await takeOrRefuse(store, [cap(`reports:${input.network}`, config.app.reportsPerHour, HOUR_MS)], (seconds) => ({
        message: 'Too many reports from your network; please try again later.',
        agentMessage: `Reports are capped per network. Try again in ${Math.ceil(seconds / 60)} minutes.`,
      }));
      const report = await store.createReport({ site: site.name, reason: input.reason as ReportReason, details, contact, network: input.network });
      log.info({ report: report.id, site: site.name, reason: report.reason }, 'report.created');
      const url = siteUrl(config.publicUrls, site.name);
      // The report is stored either way; mail is a courtesy that must not lose it.
      const mails = [];
      if (contact) mails.push(reportReceiptMail({ to: contact, siteUrl: url, reason: report.reason, reportId: report.id }));
      if (config.app.abuseEmail)
        mails.push(reportNoticeMail({ to: config.app.abuseEmail, siteUrl: url, reason: report.reason, reportId: report.id, details, contact }));
      for (const mail of mails) await mailer.send(mail).catch((err: unknown) => log.warn({ err, report: report.id }, 'mail.failed'));
      return report;
    },
    list: (options) => store.listReports(options),
    async resolve(id, note) {
      const report = await store.resolveReport(id, note);
      if (!report) throw new ServiceError('not_found', `There is no report ${id}.`);
      return report;
    },
  };
}
