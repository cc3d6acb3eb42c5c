// Test-only child for round-batches.test.ts: runs one polling round of the saved printers in the
// database it is given, in batches of 2 readings, one printer at a time, and is killed mid-round
// by the test. Arguments: database file, SNMP port, community, SNMP timeout (ms).
import { pino } from 'pino';
import { openDatabase } from '../../../src/store/db.js';
import { DeviceStore } from '../../../src/store/devices.js';
import { SettingsStore } from '../../../src/settings/store.js';
import { EventBus } from '../../../src/events/bus.js';
import { DiscoveryService } from '../../../src/discovery/service.js';

const [file, port, community, timeoutMs] = process.argv.slice(2);
const db = openDatabase(file);
const devices = new DeviceStore(db);
const settings = new SettingsStore(db, { subnet_scan: false, auto_discover: false, allowed_ranges: [] });
settings.update({
  snmp: { port: Number(port), communities: [community] },
  discovery: { snmp_timeout_ms: Number(timeoutMs), discover_concurrency: 1 },
});
const discovery = new DiscoveryService({ devices, settings, events: new EventBus(), log: pino({ level: 'silent' }), now: Date.now, roundBatch: 2 });
await discovery.collectSaved();
process.stdout.write('round done\n'); // the test kills this process before it gets here
