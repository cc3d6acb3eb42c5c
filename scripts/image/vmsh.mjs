#!/usr/bin/env node
// Boot test helper: runs one shell command in the test VM through the test-only console (a root
// console on the VM's second serial port, added only to the boot test's copy of the image,
// scripts/image/test-vm.sh) and prints its output; exits with the command's exit status.
//   node vmsh.mjs SOCKET TIMEOUT_S COMMAND
import { connect } from 'node:net';
import { randomBytes } from 'node:crypto';

const [sock, timeoutS, ...rest] = process.argv.slice(2);
const command = rest.join(' ');
const nonce = randomBytes(6).toString('hex');
const begin = new RegExp(`__BEGIN_${nonce}__\r?\n`);
const end = new RegExp(`__END_${nonce}_(\\d+)__`);
const c = connect(sock);
let buf = '';
const timer = setTimeout(() => {
  process.stderr.write(`vmsh: no answer in ${timeoutS}s to: ${command}\n${buf}`);
  process.exit(124);
}, Number(timeoutS) * 1000);
c.on('connect', () => {
  // One line, the command in base64: the console runs it in a shell of its own, or refuses the
  // line whole when it arrived cut. Output is taken from between this call's own markers: an
  // earlier call that timed out may still print its output first.
  c.write(`PBXCMD ${nonce} ${Buffer.from(command).toString('base64')}\n`);
});
c.on('data', (d) => {
  buf += d.toString('utf8');
  const m = end.exec(buf);
  if (m) {
    clearTimeout(timer);
    const b = begin.exec(buf);
    process.stdout.write(buf.slice(b ? b.index + b[0].length : 0, m.index));
    c.destroy();
    process.exit(Number(m[1]));
  }
});
c.on('error', (e) => {
  clearTimeout(timer);
  process.stderr.write(`vmsh: ${e.message}\n`);
  process.exit(125);
});
