import { describe, expect, it } from 'vitest';
import { isOwnFrame, type AppPage } from '../../src/main/own-frame';
import { refuseForeignRequest } from '../../src/studio/local-guard';

describe('IPC sender check: only our own page may call the studio', () => {
  const dev: AppPage = {
    devServerUrl: 'http://localhost:5173/',
    rendererFile: '/app/out/renderer/index.html',
  };
  const packaged: AppPage = {
    devServerUrl: undefined,
    rendererFile: '/app/out/renderer/index.html',
  };
  const cases: [string, AppPage, string | undefined, boolean][] = [
    ['dev server page', dev, 'http://localhost:5173/', true],
    ['dev server page with a route', dev, 'http://localhost:5173/#/review?x=1', true],
    [
      'look-alike host that starts with the dev origin',
      dev,
      'http://localhost:5173.evil.test/',
      false,
    ],
    ['dev origin with user info', dev, 'http://localhost:5173@evil.test/', false],
    ['other port', dev, 'http://localhost:5174/', false],
    ['https on the dev host', dev, 'https://localhost:5173/', false],
    ['a file page in development', dev, 'file:///app/out/renderer/index.html', false],
    ['no sender url', dev, undefined, false],
    ['garbage', dev, 'not a url', false],
    ['packaged page', packaged, 'file:///app/out/renderer/index.html', true],
    ['packaged page with a route', packaged, 'file:///app/out/renderer/index.html#/export', true],
    ['another file page', packaged, 'file:///tmp/evil.html', false],
    ['a sibling file of ours', packaged, 'file:///app/out/renderer/other.html', false],
    ['a file URL with a host', packaged, 'file://evil.test/app/out/renderer/index.html', false],
    ['a web page when packaged', packaged, 'http://localhost:5173/', false],
    ['a data URL', packaged, 'data:text/html,<p>hi</p>', false],
  ];
  it.each(cases)('%s', (_name, page, frameUrl, accepted) => {
    expect(isOwnFrame(frameUrl, page)).toBe(accepted);
  });
});

describe('studio web guard: Host and Origin must be this machine', () => {
  const cases: [string, { host?: string; origin?: string }, boolean][] = [
    ['loopback with port', { host: '127.0.0.1:5170' }, true],
    [
      'localhost with matching origin',
      { host: 'localhost:5170', origin: 'http://localhost:5170' },
      true,
    ],
    ['IPv6 loopback', { host: '[::1]:5170', origin: 'http://[::1]:5170' }, true],
    ['no Host header', {}, false],
    ['DNS rebinding host', { host: 'evil.test:5170' }, false],
    ['look-alike host', { host: 'localhost.evil.test:5170' }, false],
    ['host with a bad port', { host: 'localhost:abc' }, false],
    ['host with two ports', { host: '127.0.0.1:5170:80' }, false],
    ['foreign origin', { host: '127.0.0.1:5170', origin: 'http://evil.test' }, false],
    ['origin on another port', { host: '127.0.0.1:5170', origin: 'http://127.0.0.1:9999' }, false],
    ['opaque origin', { host: '127.0.0.1:5170', origin: 'null' }, false],
    [
      'https origin for an http studio',
      { host: 'localhost:5170', origin: 'https://localhost:5170' },
      false,
    ],
  ];
  it.each(cases)('%s', (_name, headers, accepted) => {
    expect(refuseForeignRequest(headers) === null).toBe(accepted);
  });
});
