// Minimal typings for the parts of untyped dependencies that the parsers use.

declare module 'papaparse' {
  export interface ParseError {
    type: string;
    code: string;
    message: string;
    row?: number;
  }
  export interface ParseConfig {
    delimiter?: string;
    newline?: string;
    quoteChar?: string;
    header?: false;
    skipEmptyLines?: boolean | 'greedy';
    dynamicTyping?: false;
    preview?: number;
  }
  export interface ParseResult {
    data: string[][];
    errors: ParseError[];
    meta: { delimiter: string; linebreak: string; aborted: boolean; truncated: boolean };
  }
  const Papa: { parse(input: string, config?: ParseConfig): ParseResult };
  export default Papa;
}

declare module 'mailparser' {
  export interface AddressObject {
    text: string;
    value: { address?: string; name: string }[];
  }
  export interface Attachment {
    filename?: string;
    contentType: string;
    contentDisposition?: string;
    content: Buffer;
    size: number;
    cid?: string;
    related?: boolean;
  }
  export interface ParsedMail {
    subject?: string;
    from?: AddressObject;
    to?: AddressObject | AddressObject[];
    cc?: AddressObject | AddressObject[];
    bcc?: AddressObject | AddressObject[];
    replyTo?: AddressObject;
    date?: Date;
    messageId?: string;
    inReplyTo?: string;
    text?: string;
    html?: string | false;
    attachments: Attachment[];
  }
  export interface SimpleParserOptions {
    skipHtmlToText?: boolean;
    skipTextToHtml?: boolean;
    skipImageLinks?: boolean;
    skipTextLinks?: boolean;
    maxHtmlLengthToParse?: number;
  }
  export function simpleParser(source: Buffer | string, options?: SimpleParserOptions): Promise<ParsedMail>;
}
