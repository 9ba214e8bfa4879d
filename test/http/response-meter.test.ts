import { describe, expect, it } from 'vitest';
import { createResponseMeter, PLAIN_ENDS } from '../../src/http/response-meter.js';
import type { HttpResponse } from '../../src/http/uws.js';

/** A stand-in for uWS's response class: its methods record nothing, as the native ones would write. */
class FakeResponse {
  aborted?: () => void;
  /** What the class's own `end` and `endWithoutBody` were given, by whichever caller. */
  ended: unknown[] = [];
  writeStatus(): this {
    return this;
  }
  writeHeader(): this {
    return this;
  }
  write(): boolean {
    return true;
  }
  end(body?: unknown): this {
    this.ended.push(body);
    return this;
  }
  endWithoutBody(): this {
    this.ended.push('without body');
    return this;
  }
  tryEnd(_chunk: unknown, _total: number): [boolean, boolean] {
    return [true, true];
  }
  close(): this {
    return this;
  }
  onAborted(handler: () => void): this {
    this.aborted = handler;
    return this;
  }
}

interface Finished {
  tag: number;
  status: number;
  bytes: number;
  ms: number;
  aborted: boolean;
  detail: string;
}

function meterFor(timeEveryAnswer: boolean) {
  const finished: Finished[] = [];
  const meter = createResponseMeter<string>((tag, status, bytes, ms, aborted, detail) => finished.push({ tag, status, bytes, ms, aborted, detail }), {
    timeEveryAnswer,
  });
  const response = () => new FakeResponse() as unknown as HttpResponse & FakeResponse;
  return { meter, finished, response };
}

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('response meter', () => {
  it('counts an answer given within its handler, with its status and bytes, untimed', () => {
    const { meter, finished, response } = meterFor(false);
    const res = response();
    meter.begin(res, 2, 'a');
    res.writeStatus('404 Not Found');
    res.write(Buffer.alloc(10));
    res.end('hello');
    meter.handled(res);
    expect(finished).toEqual([{ tag: 2, status: 404, bytes: 15, ms: 0, aborted: false, detail: 'a' }]);
  });

  it('times an answer still owed when its handler returns, from that return', async () => {
    const { meter, finished, response } = meterFor(false);
    const owed = response();
    meter.begin(owed, 1, 'owed');
    meter.handled(owed);
    // Another request comes and goes while the first waits.
    const quick = response();
    meter.begin(quick, 3, 'quick');
    quick.endWithoutBody();
    meter.handled(quick);
    await wait(30);
    owed.writeStatus('201 Created');
    owed.end('{}');
    expect(finished.map((f) => f.detail)).toEqual(['quick', 'owed']);
    expect(finished[1]).toMatchObject({ tag: 1, status: 201, bytes: 2, aborted: false });
    expect(finished[1]!.ms).toBeGreaterThanOrEqual(25);
  });

  it('times every answer when asked to (the access log prints each one)', async () => {
    const { meter, finished, response } = meterFor(true);
    const res = response();
    meter.begin(res, 0, 'x');
    const until = performance.now() + 5;
    while (performance.now() < until);
    res.end();
    meter.handled(res);
    expect(finished[0]!.ms).toBeGreaterThanOrEqual(5);
  });

  it('an owed response ended inside another handler is told apart from that handler’s own', () => {
    const { meter, finished, response } = meterFor(false);
    const owed = response();
    meter.begin(owed, 1, 'owed');
    meter.handled(owed);
    const current = response();
    meter.begin(current, 2, 'current');
    owed.writeStatus('500 Internal Server Error');
    owed.end('boom');
    current.end('ok');
    meter.handled(current);
    expect(finished).toMatchObject([
      { detail: 'owed', tag: 1, status: 500, bytes: 4 },
      { detail: 'current', tag: 2, status: 200, bytes: 2 },
    ]);
  });

  it('retags the running response and an owed one', () => {
    const { meter, finished, response } = meterFor(false);
    const owed = response();
    meter.begin(owed, 0, 'owed');
    meter.handled(owed);
    meter.retag(owed, 5);
    const res = response();
    meter.begin(res, 0, 'now');
    meter.retag(res, 4);
    res.end();
    meter.handled(res);
    owed.end();
    expect(finished.map((f) => [f.detail, f.tag])).toEqual([
      ['now', 4],
      ['owed', 5],
    ]);
  });

  it('an abort or a close after an end is counted once; an abort alone is counted as aborted', () => {
    const { meter, finished, response } = meterFor(false);
    const res = response();
    meter.begin(res, 0, 'ended');
    res.onAborted(() => {});
    meter.handled(res);
    res.end('x');
    res.aborted!();
    res.close();
    const cut = response();
    meter.begin(cut, 0, 'cut');
    cut.onAborted(() => {});
    meter.handled(cut);
    cut.write('abc');
    cut.aborted!();
    expect(finished).toMatchObject([
      { detail: 'ended', aborted: false, bytes: 1 },
      { detail: 'cut', aborted: true, bytes: 3 },
    ]);
  });

  it('a tryEnd that finishes counts the total size', () => {
    const { meter, finished, response } = meterFor(false);
    const res = response();
    meter.begin(res, 0, 't');
    meter.handled(res);
    res.tryEnd(Buffer.alloc(4), 1000);
    expect(finished).toMatchObject([{ detail: 't', bytes: 1000 }]);
  });
  it('ends the running response itself, counted with the status and size it was given, without the wrappers', () => {
    const { meter, finished, response } = meterFor(false);
    const wrappedEnd = FakeResponse.prototype.end;
    const res = response();
    meter.begin(res, 0, 'page');
    // A wrapper that ran would count first, with the status it parsed (200): the given 404 shows it did not.
    FakeResponse.prototype.end = () => {
      throw new Error('the wrapped end ran');
    };
    try {
      meter.end(res, 404, Buffer.alloc(2048), 2048);
    } finally {
      FakeResponse.prototype.end = wrappedEnd;
    }
    meter.handled(res);
    const revalidated = response();
    meter.begin(revalidated, 1, '304');
    meter.endWithoutBody(revalidated, 304);
    meter.handled(revalidated);
    expect(finished).toEqual([
      { tag: 0, status: 404, bytes: 2048, ms: 0, aborted: false, detail: 'page' },
      { tag: 1, status: 304, bytes: 0, ms: 0, aborted: false, detail: '304' },
    ]);
    expect(res.ended).toEqual([Buffer.alloc(2048)]);
    expect(revalidated.ended).toEqual(['without body']);
  });

  it('its ends time an answer when every answer is timed, and leave a response not in the slot to the wrappers', async () => {
    const { meter, finished, response } = meterFor(true);
    const res = response();
    meter.begin(res, 0, 'timed');
    const until = performance.now() + 5;
    while (performance.now() < until);
    meter.end(res, 200, Buffer.from('ok'), 2);
    meter.handled(res);
    expect(finished[0]).toMatchObject({ detail: 'timed', status: 200, bytes: 2 });
    expect(finished[0]!.ms).toBeGreaterThanOrEqual(5);
    // Owed (its handler returned): the wrapped end finds it and counts it once.
    const owed = response();
    meter.begin(owed, 0, 'owed');
    meter.handled(owed);
    await wait(1);
    meter.end(owed, 200, Buffer.from('late'), 4);
    expect(finished.map((f) => [f.detail, f.bytes])).toEqual([
      ['timed', 2],
      ['owed', 4],
    ]);
    expect(owed.ended).toEqual([Buffer.from('late')]);
  });

  it('with a count for untimed answers, its ends count there and not through the finish callback; the wrappers still do', () => {
    const finished: Finished[] = [];
    const answered: Array<[number, number, number]> = [];
    const meter = createResponseMeter<string>((tag, status, bytes, ms, aborted, detail) => finished.push({ tag, status, bytes, ms, aborted, detail }), {
      timeEveryAnswer: false,
      answered: (tag, status, bytes) => answered.push([tag, status, bytes]),
    });
    const page = new FakeResponse() as unknown as HttpResponse & FakeResponse;
    meter.begin(page, 3, 'page');
    meter.end(page, 200, Buffer.alloc(2048), 2048);
    meter.handled(page);
    const revalidated = new FakeResponse() as unknown as HttpResponse & FakeResponse;
    meter.begin(revalidated, 1, '304');
    meter.endWithoutBody(revalidated, 304);
    meter.handled(revalidated);
    // A general writer's answer goes through the wrappers and the callback, as before.
    const general = new FakeResponse() as unknown as HttpResponse & FakeResponse;
    meter.begin(general, 2, 'general');
    general.end('hello');
    meter.handled(general);
    // Counted once: a close after the end finds nothing open.
    page.close();
    expect(answered).toEqual([
      [3, 200, 2048],
      [1, 304, 0],
    ]);
    expect(finished).toEqual([{ tag: 2, status: 200, bytes: 5, ms: 0, aborted: false, detail: 'general' }]);
    expect(page.ended).toEqual([Buffer.alloc(2048)]);
  });

  it('a meter that times every answer leaves the count for untimed ones unused', () => {
    const finished: number[] = [];
    const answered: number[] = [];
    const meter = createResponseMeter<string>((_tag, status) => finished.push(status), {
      timeEveryAnswer: true,
      answered: (_tag, status) => answered.push(status),
    });
    const res = new FakeResponse() as unknown as HttpResponse & FakeResponse;
    meter.begin(res, 0, 'timed');
    meter.end(res, 200, Buffer.from('ok'), 2);
    meter.handled(res);
    expect([finished, answered]).toEqual([[200], []]);
  });

  it('without a meter, the plain ends only end', () => {
    const res = new FakeResponse() as unknown as HttpResponse & FakeResponse;
    PLAIN_ENDS.end(res, 200, Buffer.from('x'), 1);
    PLAIN_ENDS.endWithoutBody(res, 304);
    expect(res.ended).toEqual([Buffer.from('x'), 'without body']);
  });
});
