'use strict';
// Loaded with `node --require` before the launcher, to run it as if on another
// platform: process.platform and process.arch become $STUB_PLATFORM and
// $STUB_ARCH. The launcher itself has no test-only switch.
for (const [prop, name] of [
  ['platform', 'STUB_PLATFORM'],
  ['arch', 'STUB_ARCH'],
]) {
  const value = process.env[name];
  if (value) Object.defineProperty(process, prop, { value, configurable: true });
}
