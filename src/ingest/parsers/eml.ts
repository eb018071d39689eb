/**
 * RFC 822 email with mailparser: headers in `meta`, the text/plain body (else the HTML body as
 * text), and every attachment — inline images and nested messages included — parsed recursively
 * through `parseInner`. An attachment that cannot be parsed is recorded with `error`, never fatal.
 */
import { simpleParser } from 'mailparser';
import type { AddressObject, Attachment as MailAttachment } from 'mailparser';
import type { Attachment, Block, ParsedDocument } from '../types.js';
import { ParseError } from '../types.js';
import { checkAbort, fail, paragraphs, shortMessage, tidy } from './common.js';
import type { Ctx } from './common.js';
import { checkHtmlDepth, extractHtml } from './html.js';

/** Parses nested bytes with the same options and budget; supplied by the dispatcher. */
export type ParseInner = (data: Uint8Array, filename: string, ctx: Ctx) => Promise<ParsedDocument>;

const addr = (a: AddressObject | AddressObject[] | undefined): string | undefined =>
  a === undefined ? undefined : (Array.isArray(a) ? a.map((x) => x.text).join(', ') : a.text) || undefined;

const EXT: Record<string, string> = {
  'message/rfc822': 'eml', 'text/plain': 'txt', 'text/html': 'html', 'text/csv': 'csv', 'text/markdown': 'md',
  'application/pdf': 'pdf', 'application/json': 'json', 'image/png': 'png', 'image/jpeg': 'jpg',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'xlsx',
  'application/vnd.openxmlformats-officedocument.presentationml.presentation': 'pptx',
};

function attachmentName(a: MailAttachment, i: number): string {
  if (a.filename) return a.filename;
  return `attachment-${i + 1}.${EXT[a.contentType.toLowerCase()] ?? 'bin'}`;
}

export async function parseEml(data: Uint8Array, ctx: Ctx, parseInner: ParseInner): Promise<ParsedDocument> {
  const head = new TextDecoder('latin1').decode(data.subarray(0, 4096));
  // mailparser accepts anything; require at least one header line so junk is not called an email.
  if (!/^[\x21-\x39\x3b-\x7e]+:[ \t]?\S/m.test(head)) fail('Invalid email: no RFC 822 headers found');
  let mail;
  const raw = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const options = { skipImageLinks: true, skipTextLinks: true, skipTextToHtml: true };
  try {
    mail = await simpleParser(raw, options);
  } catch (e) {
    // mailsplit stops at 1,000 MIME parts (nested-part bombs); say so rather than its wording.
    if (/Max allowed child nodes exceeded/.test(shortMessage(e))) fail('Invalid email: more than 1000 MIME parts (the MIME part limit); refusing to parse it', e);
    if (/Failed to parse HTML/.test(shortMessage(e))) {
      // Its HTML-to-text step gave up (a stack overflow on deep nesting): name the cause if that is it.
      const again = await simpleParser(raw, { ...options, skipHtmlToText: true }).catch(() => undefined);
      if (typeof again?.html === 'string') checkHtmlDepth(again.html, ctx.opts.maxNestingDepth);
    }
    fail(`Invalid email: ${shortMessage(e)}`, e);
  }
  const meta: Record<string, string> = {};
  const put = (k: string, v: string | undefined) => {
    if (v) meta[k] = v;
  };
  put('from', addr(mail.from));
  put('to', addr(mail.to));
  put('cc', addr(mail.cc));
  put('subject', mail.subject);
  put('date', mail.date && !Number.isNaN(mail.date.getTime()) ? mail.date.toISOString() : undefined);
  put('message_id', mail.messageId);
  put('in_reply_to', mail.inReplyTo);

  const blocks: Block[] = [];
  if (mail.subject) blocks.push({ kind: 'title', text: mail.subject });
  const headerLines = ['from', 'to', 'cc', 'date'].filter((k) => meta[k]).map((k) => `${k[0]!.toUpperCase()}${k.slice(1)}: ${meta[k]}`);
  if (headerLines.length) blocks.push({ kind: 'header', text: headerLines.join('\n') });
  const plain = tidy(mail.text ?? '');
  if (plain) {
    for (const p of paragraphs(plain)) blocks.push({ kind: 'text', text: p });
  } else if (typeof mail.html === 'string' && mail.html.trim()) {
    blocks.push(...extractHtml(mail.html, ctx.opts.maxNestingDepth).blocks.filter((b) => b.kind !== 'title'));
  }

  const attachments: Attachment[] = [];
  for (const [i, a] of mail.attachments.entries()) {
    checkAbort(ctx.signal);
    const filename = attachmentName(a, i);
    const att: Attachment = { filename, contentType: a.contentType, size: a.size ?? a.content.length };
    if (ctx.depth + 1 > ctx.opts.maxAttachmentDepth) {
      att.error = `Not parsed: attachments nested deeper than ${ctx.opts.maxAttachmentDepth} levels`;
    } else if (a.content.length === 0) {
      att.error = 'File is empty';
    } else {
      try {
        att.parsed = await parseInner(new Uint8Array(a.content), filename, { ...ctx, depth: ctx.depth + 1, warnings: [] });
      } catch (e) {
        // A timeout or cancel belongs to the whole email, not to this attachment.
        if (ctx.signal.aborted) throw e;
        att.error = e instanceof ParseError ? e.message : `Could not parse attachment: ${shortMessage(e)}`;
      }
    }
    attachments.push(att);
  }
  const doc: ParsedDocument = { format: 'eml', blocks, meta };
  if (mail.subject) doc.title = mail.subject;
  if (attachments.length) doc.attachments = attachments;
  return doc;
}
