import { expect } from 'chai';
import { defaultListen, defaultServePort, isLoopback, parseListenAddress, type ListenAddress } from '../../src/serve/listen-address.js';

describe('serve: --listen addresses (parseListenAddress)', () => {
  const good: Array<[string, ListenAddress]> = [
    ['127.0.0.1:8767', { kind: 'tcp', host: '127.0.0.1', port: 8767, loopback: true }],
    ['127.0.0.1:0', { kind: 'tcp', host: '127.0.0.1', port: 0, loopback: true }],
    ['127.9.8.7:65535', { kind: 'tcp', host: '127.9.8.7', port: 65535, loopback: true }],
    ['[::1]:8767', { kind: 'tcp', host: '::1', port: 8767, loopback: true }],
    ['[0:0:0:0:0:0:0:1]:1', { kind: 'tcp', host: '0:0:0:0:0:0:0:1', port: 1, loopback: true }],
    ['[::ffff:127.0.0.1]:80', { kind: 'tcp', host: '::ffff:127.0.0.1', port: 80, loopback: true }],
    ['localhost:8767', { kind: 'tcp', host: 'localhost', port: 8767, loopback: true }],
    ['LocalHost:8767', { kind: 'tcp', host: 'LocalHost', port: 8767, loopback: true }],
    ['0.0.0.0:8767', { kind: 'tcp', host: '0.0.0.0', port: 8767, loopback: false }],
    ['[::]:8767', { kind: 'tcp', host: '::', port: 8767, loopback: false }],
    ['[::ffff:10.0.0.1]:8767', { kind: 'tcp', host: '::ffff:10.0.0.1', port: 8767, loopback: false }],
    ['192.168.1.20:9000', { kind: 'tcp', host: '192.168.1.20', port: 9000, loopback: false }],
    ['devbox.internal:9000', { kind: 'tcp', host: 'devbox.internal', port: 9000, loopback: false }],
    ['unix:/run/user/1000/warden.sock', { kind: 'unix', path: '/run/user/1000/warden.sock' }],
    ['unix:warden.sock', { kind: 'unix', path: 'warden.sock' }],
  ];
  for (const [value, expected] of good) {
    it(`reads ${value}`, () => {
      expect(parseListenAddress(value)).to.deep.equal(expected);
    });
  }

  const bad: Array<[string, string]> = [
    ['', 'no port'],
    ['8767', 'write 127.0.0.1:8767'],
    ['127.0.0.1', 'no port'],
    ['127.0.0.1:', 'no port after the colon'],
    [':8767', 'no host before the port'],
    ['127.0.0.1:65536', 'not a number from 0 to 65535'],
    ['127.0.0.1:-1', 'not a number from 0 to 65535'],
    ['127.0.0.1:80a', 'not a number from 0 to 65535'],
    ['127.0.0.1:123456', 'not a number from 0 to 65535'],
    ['::1:8767', 'goes in brackets'],
    ['[::1:8767', 'not a bracketed IPv6 address'],
    ['[127.0.0.1]:8767', 'not a bracketed IPv6 address'],
    ['bad_host:8767', 'neither an IP address nor a host name'],
    ['http://127.0.0.1:8767', 'has no scheme'],
    ['ws://localhost:8767/acp', 'has no scheme'],
    ['unix:', 'no socket path'],
    [`unix:/tmp/${'s'.repeat(120)}`, 'longer than'],
  ];
  for (const [value, why] of bad) {
    it(`refuses ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}, naming the value, why and the forms`, () => {
      expect(() => parseListenAddress(value)).to.throw(TypeError)
        .with.property('message').that.includes(`--listen ${JSON.stringify(value)}`).and.includes(why)
        .and.includes('127.0.0.1:PORT').and.includes('unix:PATH');
    });
  }

  it('defaults to loopback on a fixed port', () => {
    expect(defaultListen).to.equal(`127.0.0.1:${defaultServePort}`);
    expect(parseListenAddress(defaultListen)).to.deep.equal({ kind: 'tcp', host: '127.0.0.1', port: defaultServePort, loopback: true });
  });

  it('calls 127.0.0.0/8, ::1 and IPv4-mapped 127.x loopback, and nothing else', () => {
    for (const host of ['127.0.0.1', '127.255.255.255', '::1', '::0001', '::ffff:127.1.2.3', 'localhost', 'localhost.']) expect(isLoopback(host), host).to.equal(true);
    for (const host of ['0.0.0.0', '128.0.0.1', '10.0.0.1', '::', '::2', 'fe80::1', '::ffff:10.0.0.1', 'localhost.example', 'example.com']) expect(isLoopback(host), host).to.equal(false);
  });
});
