import { html } from 'hono/html';
import type { Mail } from './mailer.js';

/**
 * The e-mails we send, each with a plain-text and an HTML part. Every value is escaped in the
 * HTML part (site names, addresses and links are caller-supplied); links are also given as plain
 * text so they survive mail clients that strip HTML.
 */

const wrap = (body: unknown): string =>
  String(html`<!doctype html>
<html lang="en">
  <body style="font:16px/1.5 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:#1a1a1a;max-width:36rem;margin:0 auto;padding:1rem">
    ${body}
    <p style="color:#555;font-size:14px">Plinth — static sites from a folder.</p>
  </body>
</html>`);

const button = (href: string, label: string): unknown =>
  html`<p><a href="${href}" style="display:inline-block;background:#1f4fd1;color:#fff;padding:.6rem 1rem;border-radius:6px;text-decoration:none">${label}</a></p>`;

export function signInMail(input: { to: string; link: string; code: string; minutes: number }): Mail {
  const { to, link, code, minutes } = input;
  return {
    to,
    subject: `Your Plinth sign-in code: ${code}`,
    text: [
      'Hello,',
      '',
      'Open this link to sign in to Plinth:',
      link,
      '',
      `Or enter this code on the sign-in page: ${code}`,
      '',
      `The link and the code work once, for ${minutes} minutes. If you did not ask to sign in, ignore this e-mail; nobody can sign in without it.`,
    ].join('\n'),
    html: wrap(html`<p>Hello,</p>
    <p>Use this button to sign in to Plinth:</p>
    ${button(link, 'Sign in to Plinth')}
    <p>Or enter this code on the sign-in page: <strong style="font-size:20px;letter-spacing:2px">${code}</strong></p>
    <p>The link and the code work once, for ${minutes} minutes. If you did not ask to sign in, ignore this e-mail; nobody can sign in without it.</p>
    <p style="color:#555;font-size:14px">If the button does not work, copy this address into your browser: ${link}</p>`),
  };
}

export function inviteMail(input: {
  to: string;
  inviter: string;
  siteName: string;
  siteUrl: string;
  role: string;
  acceptUrl: string;
  expiresAt: string;
}): Mail {
  const { to, inviter, siteName, siteUrl, role, acceptUrl, expiresAt } = input;
  return {
    to,
    subject: `You are invited to ${siteName}`,
    text: [
      'Hello,',
      '',
      `${inviter} invited you to the site ${siteUrl} as ${role}.`,
      '',
      'Accept the invitation here:',
      acceptUrl,
      '',
      `The link works until ${expiresAt}. If you did not expect this e-mail, you can ignore it.`,
    ].join('\n'),
    html: wrap(html`<p>Hello,</p>
    <p>${inviter} invited you to the site <a href="${siteUrl}">${siteUrl}</a> as <strong>${role}</strong>.</p>
    ${button(acceptUrl, 'Review the invitation')}
    <p>The link works until ${expiresAt}. If you did not expect this e-mail, you can ignore it.</p>
    <p style="color:#555;font-size:14px">If the button does not work, copy this address into your browser: ${acceptUrl}</p>`),
  };
}

export function reportReceiptMail(input: { to: string; siteUrl: string; reason: string; reportId: string }): Mail {
  const { to, siteUrl, reason, reportId } = input;
  return {
    to,
    subject: `We received your report about ${siteUrl}`,
    text: [
      'Hello,',
      '',
      `Thank you for reporting ${siteUrl} (reason: ${reason}). Our operators review every report.`,
      `Your report number is ${reportId}.`,
      '',
      'You do not need to do anything else. We may write to this address if we need more details.',
    ].join('\n'),
    html: wrap(html`<p>Hello,</p>
    <p>Thank you for reporting <strong>${siteUrl}</strong> (reason: ${reason}). Our operators review every report.</p>
    <p>Your report number is <code>${reportId}</code>.</p>
    <p>You do not need to do anything else. We may write to this address if we need more details.</p>`),
  };
}

export function reportNoticeMail(input: { to: string; siteUrl: string; reason: string; reportId: string; details: string; contact?: string }): Mail {
  const { to, siteUrl, reason, reportId, details, contact } = input;
  return {
    to,
    subject: `Abuse report ${reportId}: ${siteUrl} (${reason})`,
    text: [
      `Site: ${siteUrl}`,
      `Reason: ${reason}`,
      `Contact: ${contact ?? '(none given)'}`,
      '',
      details || '(no details)',
      '',
      `List open reports: plinth admin report list; resolve: plinth admin report resolve ${reportId}; take the site down: plinth admin site takedown <name>.`,
    ].join('\n'),
    html: wrap(html`<p><strong>Site:</strong> ${siteUrl}<br><strong>Reason:</strong> ${reason}<br><strong>Contact:</strong> ${contact ?? '(none given)'}</p>
    <pre style="white-space:pre-wrap;background:#f4f4f4;padding:.5rem">${details || '(no details)'}</pre>
    <p>List open reports: <code>plinth admin report list</code>; resolve: <code>plinth admin report resolve ${reportId}</code>; take the site down: <code>plinth admin site takedown &lt;name&gt;</code>.</p>`),
  };
}
