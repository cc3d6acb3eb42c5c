// Forward-only, versioned schema migrations. PRAGMA user_version holds the applied version.
// Each step runs in its own transaction together with the version bump, so a power cut leaves
// the database at one version or the next, never in between. A step never drops user data:
// a later change to a table is a new step that copies rows forward.
import type { Database } from 'better-sqlite3';

export interface Migration {
  version: number;
  description: string;
  up(db: Database): void;
}

// Columns of an aggregated tier (hourly, daily, monthly). Counters keep min/max/avg; the served
// value is max (counters are cumulative). Toner keeps the last reading and the average per key.
// Migration 1 made the per-device key a table constraint, UNIQUE (serial, ts); migration 3 rebuilds
// hourly and daily without it (unique: false) and keys them by index instead (keys.ts).
const aggregateTable = (name: string, unique = true) => `
  CREATE TABLE ${name} (
    id INTEGER PRIMARY KEY,
    serial TEXT NOT NULL,
    ts INTEGER NOT NULL,              -- bucket start, epoch ms UTC
    sample_count INTEGER NOT NULL,
    page_count_min INTEGER, page_count_max INTEGER, page_count_avg REAL,
    color_pages_min INTEGER, color_pages_max INTEGER, color_pages_avg REAL,
    mono_pages_min INTEGER, mono_pages_max INTEGER, mono_pages_avg REAL,
    scan_count_min INTEGER, scan_count_max INTEGER, scan_count_avg REAL,
    toner_last TEXT,                  -- JSON object, last reading in the bucket
    toner_avg TEXT                    -- JSON object, average per key
    ${unique ? ', UNIQUE (serial, ts)' : ''}
  );`;

export const migrations: Migration[] = [
  {
    version: 1,
    description: 'devices, four metric tiers, settings',
    up(db) {
      db.exec(`
        CREATE TABLE devices (
          serial TEXT PRIMARY KEY,
          ip TEXT NOT NULL,
          manufacturer TEXT, model TEXT, hostname TEXT, firmware TEXT,
          mac_address TEXT, subnet_mask TEXT, gateway TEXT,
          consumables TEXT, status_messages TEXT,          -- JSON arrays
          last_seen INTEGER NOT NULL, created_at INTEGER NOT NULL, first_seen INTEGER NOT NULL,
          discovery_method TEXT, asset_number TEXT, location TEXT, description TEXT, web_ui_url TEXT,
          raw_data TEXT,                                   -- JSON object
          device_type TEXT NOT NULL, source_type TEXT NOT NULL,
          port_name TEXT, driver_name TEXT, spooler_status TEXT,
          is_usb INTEGER NOT NULL DEFAULT 0, is_default INTEGER NOT NULL DEFAULT 0,
          is_shared INTEGER NOT NULL DEFAULT 0, usb_webui_available INTEGER NOT NULL DEFAULT 0,
          initial_page_count INTEGER,
          dns_servers TEXT, dhcp_server TEXT,              -- JSON array, string
          is_saved INTEGER NOT NULL DEFAULT 0, visible INTEGER NOT NULL DEFAULT 1,
          walk_filename TEXT, last_scan_id INTEGER,
          locked_fields TEXT,                              -- JSON array of LockedField
          printer_info TEXT                                -- JSON: last PrinterInfo read from the device
        );
        CREATE INDEX devices_listing ON devices (is_saved, visible, last_seen);

        CREATE TABLE metrics_raw (
          id INTEGER PRIMARY KEY,
          serial TEXT NOT NULL,
          ts INTEGER NOT NULL,                             -- epoch ms UTC
          page_count INTEGER, color_pages INTEGER, mono_pages INTEGER, scan_count INTEGER,
          toner_levels TEXT,                               -- JSON object
          extra TEXT                                       -- JSON: other declared counters, kept for export
        );
        CREATE INDEX metrics_raw_serial_ts ON metrics_raw (serial, ts);
        ${aggregateTable('metrics_hourly')}
        ${aggregateTable('metrics_daily')}
        ${aggregateTable('metrics_monthly')}

        CREATE TABLE settings (
          key TEXT PRIMARY KEY,
          value TEXT NOT NULL                              -- JSON
        );
      `);
    },
  },
  {
    version: 2,
    description: 'roll-up watermarks; time indexes for roll-up and retention range scans',
    up(db) {
      // rollup_state: per aggregated tier, every bucket starting before done_until is closed and
      // written. The roll-up advances it in the same transaction as the buckets it wrote.
      // The (ts) indexes let roll-up and retention read one time range of every device without a
      // full scan; raw inserts append at the right edge of metrics_raw_ts (few pages per round).
      db.exec(`
        CREATE TABLE rollup_state (
          tier TEXT PRIMARY KEY,
          done_until INTEGER NOT NULL                      -- epoch ms UTC, bucket boundary
        );
        CREATE INDEX metrics_raw_ts ON metrics_raw (ts);
        CREATE INDEX metrics_hourly_ts ON metrics_hourly (ts);
        CREATE INDEX metrics_daily_ts ON metrics_daily (ts);
      `);
    },
  },
  {
    version: 3,
    description: 'flash wear: device_latest; raw, hourly, daily keyed by (ts / bucket, serial, ts)',
    up(db) {
      // Why: with (serial, ts), every polling round inserted one entry at the end of each device's
      // range, i.e. dirtied one index page per device per round (96 x 4 KiB a day per device), and
      // each daily roll-up and retention did the same in hourly and daily. Keyed by
      // (ts / bucket, serial, ts), one bucket of all devices is a contiguous run of pages that all
      // of its writes share; a device's rows are one index seek per bucket (src/store/keys.ts,
      // whose BUCKET_MS must match the literals here).
      // device_latest replaces what the per-device order gave for free: the newest snapshot (for
      // /devices/discovered) and the time a device last answered (last_seen) without rewriting its
      // whole record every poll. Small: ~40 bytes a device, a handful of pages per round.
      db.exec(`
        CREATE TABLE device_latest (
          serial TEXT PRIMARY KEY,
          ts INTEGER NOT NULL,                             -- epoch ms UTC of the newest raw snapshot
          raw_id INTEGER NOT NULL                          -- its metrics_raw.id (gone after retention)
        ) WITHOUT ROWID;
        INSERT INTO device_latest (serial, ts, raw_id)
          SELECT serial, max(ts), id FROM metrics_raw GROUP BY serial;
        DROP INDEX metrics_raw_serial_ts;
        CREATE INDEX metrics_raw_bucket ON metrics_raw (ts / 3600000, serial, ts);
      `);
      // Every row is copied forward; only the key changes (a table constraint cannot be dropped).
      for (const [table, bucketMs] of [['metrics_hourly', 86_400_000], ['metrics_daily', 30 * 86_400_000]] as const) {
        db.exec(`
          ${aggregateTable(`${table}_v3`, false)}
          INSERT INTO ${table}_v3 SELECT * FROM ${table};
          DROP TABLE ${table};
          ALTER TABLE ${table}_v3 RENAME TO ${table};
          CREATE UNIQUE INDEX ${table}_bucket ON ${table} (ts / ${bucketMs}, serial, ts);
          CREATE INDEX ${table}_ts ON ${table} (ts);
        `);
      }
    },
  },
  {
    version: 4,
    description: 'flash wear: drop the (ts) indexes of raw, hourly and daily',
    up(db) {
      // Roll-up and retention read a time range through the bucketed key (keys.ts keyRange), whose
      // leading term is the time bucket. The (ts) indexes only added writes: a page or more per
      // polling round and per roll-up and retention (docs/performance.md, flash writes).
      db.exec(`
        DROP INDEX metrics_raw_ts;
        DROP INDEX metrics_hourly_ts;
        DROP INDEX metrics_daily_ts;
      `);
    },
  },
  {
    version: 5,
    description: 'history: the raw key also carries page_count',
    up(db) {
      // Downsampled history reads each row's id and page_count first (MetricsStore.historySampled):
      // with page_count in the key, the raw part of that read (a week of one device is 672 rows on
      // as many table pages) comes from the index alone. id precedes it so the key still orders a
      // device's rows by (ts, id), the order history and export read them in.
      db.exec(`
        DROP INDEX metrics_raw_bucket;
        CREATE INDEX metrics_raw_bucket ON metrics_raw (ts / 3600000, serial, ts, id, page_count);
      `);
    },
  },
  {
    version: 6,
    description: 'local accounts and the one-time setup code (password auth mode)',
    up(db) {
      db.exec(`
        CREATE TABLE accounts (
          username TEXT PRIMARY KEY,
          password_hash TEXT NOT NULL,      -- scrypt$..., auth/passwords.ts
          created_at INTEGER NOT NULL,
          updated_at INTEGER NOT NULL
        );
        CREATE TABLE setup_code (
          id INTEGER PRIMARY KEY CHECK (id = 1),
          code_hash TEXT NOT NULL,          -- SHA-256 of the normalized code
          created_at INTEGER NOT NULL
        );
      `);
    },
  },
  {
    version: 7,
    description: 'one raw reading per device and timestamp: duplicates removed, later ones ignored',
    up(db) {
      // Why: importing the same backup twice stored every raw row twice, and the server upload
      // relies on (serial, ts) naming one reading. Of each duplicated (serial, ts) the first row
      // (lowest id) stays, and device_latest is pointed at it. Hourly rows rolled up from
      // duplicates keep their sample_count; they serve max and last, which a copy does not change.
      //
      // The rule is a trigger on the raw key, not a UNIQUE index: SQLite checks a UNIQUE index
      // on all of its columns, and the raw key ends in id, page_count so that downsampled history
      // reads from the index alone (migration 5). Measured on the 500-device two-year fleet, a
      // UNIQUE (ts / 3600000, serial, ts) key in its place took history p50 from 0.9 to 1.6 ms
      // (week) and 1.9 to 2.7 ms (year), and a second, UNIQUE index beside it wrote 5.2 KiB more
      // per device per day in polling rounds alone (flash). The trigger's seek reads the index
      // pages the insert writes next: no page written, about 1 us an insert. An insert it ignores
      // reports no change (MetricsStore.insertRaw). A later migration that rebuilds metrics_raw
      // must create the trigger again: DROP TABLE drops it (migrations.test.ts checks the rule
      // holds at the latest version).
      db.exec(`
        CREATE TEMP TABLE raw_duplicates AS
          SELECT serial, ts, min(id) AS keep FROM metrics_raw INDEXED BY metrics_raw_bucket
          GROUP BY ts / 3600000, serial, ts HAVING count(*) > 1;
        UPDATE device_latest SET raw_id = d.keep FROM temp.raw_duplicates d
          WHERE d.serial = device_latest.serial AND d.ts = device_latest.ts AND device_latest.raw_id <> d.keep;
        DELETE FROM metrics_raw WHERE id IN (
          SELECT r.id FROM temp.raw_duplicates d JOIN metrics_raw r INDEXED BY metrics_raw_bucket
            ON r.ts / 3600000 = d.ts / 3600000 AND r.serial = d.serial AND r.ts = d.ts
          WHERE r.id > d.keep);
        DROP TABLE temp.raw_duplicates;
        CREATE TRIGGER metrics_raw_one_reading BEFORE INSERT ON metrics_raw
          WHEN EXISTS (SELECT 1 FROM metrics_raw INDEXED BY metrics_raw_bucket
            WHERE ts / 3600000 = CAST(NEW.ts AS INTEGER) / 3600000 AND serial = NEW.serial AND ts = NEW.ts)
          BEGIN SELECT RAISE(IGNORE); END;
      `);
    },
  },
  {
    version: 8,
    description: 'the central server link; raw snapshot ids are never reused',
    up(db) {
      // The upload cursor (store/server-link.ts) is a metrics_raw id: every row after it is sent.
      // Without AUTOINCREMENT SQLite hands out the largest id again once its row is deleted (a
      // device deleted, retention after a week without readings), and a new reading would land
      // behind the cursor and never be sent. The table is copied forward with its ids, indexes and
      // triggers (migration 7's one reading per device and ts; indexes first, the trigger seeks one).
      const indexes = db
        .prepare("SELECT sql FROM sqlite_master WHERE type IN ('index', 'trigger') AND tbl_name = 'metrics_raw' AND sql IS NOT NULL ORDER BY type")
        .pluck()
        .all() as string[];
      db.exec(`
        CREATE TABLE metrics_raw_next (
          id INTEGER PRIMARY KEY AUTOINCREMENT,
          serial TEXT NOT NULL,
          ts INTEGER NOT NULL,                             -- epoch ms UTC
          page_count INTEGER, color_pages INTEGER, mono_pages INTEGER, scan_count INTEGER,
          toner_levels TEXT,                               -- JSON object
          extra TEXT                                       -- JSON: other declared counters, kept for export
        );
        INSERT INTO metrics_raw_next (id, serial, ts, page_count, color_pages, mono_pages, scan_count, toner_levels, extra)
          SELECT id, serial, ts, page_count, color_pages, mono_pages, scan_count, toner_levels, extra FROM metrics_raw;
        DROP TABLE metrics_raw;
        ALTER TABLE metrics_raw_next RENAME TO metrics_raw;
      `);
      for (const sql of indexes) db.exec(sql);
      db.exec(`
        CREATE TABLE server_link (
          id INTEGER PRIMARY KEY CHECK (id = 1),
          agent_id TEXT NOT NULL,                          -- UUID made once, the box's identity for life
          server_url TEXT NOT NULL DEFAULT '',             -- the server the token and cursor belong to
          agent_token TEXT NOT NULL DEFAULT '',            -- secret: never logged or shown
          tenant_id TEXT NOT NULL DEFAULT '',
          metrics_cursor INTEGER NOT NULL DEFAULT 0,       -- last metrics_raw.id the server acknowledged
          metrics_cursor_ts INTEGER NOT NULL DEFAULT 0,    -- epoch ms of what the server holds up to (raw or tier rows)
          settings_version INTEGER NOT NULL DEFAULT 0      -- managed settings last applied
        );
      `);
    },
  },
  {
    version: 9,
    description: 'sign-in sessions kept across restarts, as hashes of their tokens',
    up(db) {
      // auth/sessions.ts: an agent restart (a crash, an update) no longer signs the technician out.
      // The cookie's token is never stored, only its SHA-256: a copy of the file signs nobody in.
      db.exec(`
        CREATE TABLE sessions (
          token_hash BLOB PRIMARY KEY,                     -- SHA-256 of the cookie's token
          user TEXT NOT NULL,
          created_at INTEGER NOT NULL,                     -- epoch ms
          expires_at INTEGER NOT NULL                      -- epoch ms; expired rows are pruned
        ) WITHOUT ROWID;
        CREATE INDEX sessions_user ON sessions (user);
        CREATE INDEX sessions_expires ON sessions (expires_at);
      `);
    },
  },
  {
    // The central server's managed-settings version is a SHA-256 hex string (server-protocol.md,
    // Heartbeat), not a number: kept as TEXT (an INTEGER column would turn an all-digit one into a REAL).
    version: 10,
    description: 'server_link.managed_settings_version: the central server\'s settings version, as text',
    up(db) {
      db.exec(`ALTER TABLE server_link ADD COLUMN managed_settings_version TEXT NOT NULL DEFAULT ''`);
    },
  },
  {
    // alerts/: one row per alert's life. At most one open row per (serial, kind, supply),
    // by a partial unique index; listings read the open ones first, then history by opened_at.
    version: 11,
    description: 'alerts: supply, status, offline and counter alerts, open and cleared',
    up(db) {
      db.exec(`
        CREATE TABLE alerts (
          id INTEGER PRIMARY KEY,
          serial TEXT NOT NULL,
          kind TEXT NOT NULL,                              -- alerts/rules.ts ALERT_KINDS
          supply TEXT NOT NULL DEFAULT '',                 -- the supply key for supply kinds, else ''
          severity TEXT NOT NULL,                          -- critical | warning
          message TEXT NOT NULL,
          opened_at INTEGER NOT NULL,                      -- epoch ms
          cleared_at INTEGER,                              -- epoch ms; NULL while open
          acknowledged_at INTEGER                          -- epoch ms; NULL until a person acknowledges
        );
        CREATE UNIQUE INDEX alerts_one_open ON alerts (serial, kind, supply) WHERE cleared_at IS NULL;
        CREATE INDEX alerts_open_by_time ON alerts (opened_at) WHERE cleared_at IS NULL;
        CREATE INDEX alerts_by_time ON alerts (opened_at);
      `);
    },
  },
  {
    // notify/: the outbox of alert notifications. A row is one message to one recipient
    // (an e-mail address or a webhook URL); while `collect_until` has not passed, alerts opened for
    // the same recipient join it (the digest). It survives a restart and a mail server that is
    // down: pending rows are retried with backoff until delivered or `failed`.
    version: 12,
    description: 'notification outbox: e-mail and webhook messages, retried until delivered or failed',
    up(db) {
      db.exec(`
        CREATE TABLE notification_outbox (
          id INTEGER PRIMARY KEY,
          channel TEXT NOT NULL,                           -- email | webhook
          target TEXT NOT NULL,                            -- one e-mail address or one webhook URL
          alerts TEXT NOT NULL,                            -- JSON array of alerts (GET /api/alerts shape)
          state TEXT NOT NULL DEFAULT 'pending',           -- pending | sent | failed
          attempts INTEGER NOT NULL DEFAULT 0,
          created_at INTEGER NOT NULL,                     -- epoch ms
          collect_until INTEGER NOT NULL,                  -- epoch ms: alerts join the row until then
          next_attempt_at INTEGER NOT NULL,                -- epoch ms
          sent_at INTEGER,                                 -- epoch ms, once delivered
          last_error TEXT
        );
        CREATE INDEX notification_outbox_due ON notification_outbox (next_attempt_at) WHERE state = 'pending';
        CREATE INDEX notification_outbox_by_state ON notification_outbox (state, id);
      `);
    },
  },
  {
    // Downsampled history (MetricsStore.historySampled) reads every row's id and page_count first.
    // A device's daily rows are written one a day among all devices' (the roll-up writes a day of
    // every device together), so a year's 335 of them lay on 335 table pages; this key holds what
    // that read needs, a device's month of rows side by side in one or two of its pages. At 2,000
    // printers x 2 years: a year's query 3.0 -> 0.5 ms for its daily part, 1,217 -> 746 pages read
    // (docs/performance.md). Its cost: one more entry a printer a day, written with the roll-up.
    // The unique (bucket, serial, ts) key stays: roll-up upserts name it.
    version: 13,
    description: 'history: a daily key that carries id and page_count_max',
    up(db) {
      db.exec('CREATE INDEX metrics_daily_points ON metrics_daily (ts / 2592000000, serial, ts, id, page_count_max)');
    },
  },
  {
    // /devices/list made every entry again from its record on every request: each stored
    // PrinterInfo parsed, overlaid and written again, 2,000 of them a list at a large site (about
    // 100 ms of CPU for 6.2 MiB). Each record now keeps its entry as written, in the pieces around
    // its last_seen (model/views.ts savedEntryParts), and which build made them. Rows written before
    // are listed from their record until they are next written (store/device-rows.ts).
    version: 14,
    description: 'devices: the /devices/list entry kept with each record',
    up(db) {
      for (const column of ['list_entry BLOB', 'list_head_bytes INTEGER', 'list_tail_bytes INTEGER', 'list_made_by INTEGER']) {
        db.exec(`ALTER TABLE devices ADD COLUMN ${column}`);
      }
    },
  },
  {
    // Each announced read looked for its printer's record (same printer-uuid, same MAC) in every
    // record, read and parsed whole: a LAN announcing new identities made every read slower than
    // the last (1.6 MB /devices/discovered, CPU near 100 %). These indexes make it one seek each;
    // devices_ip serves a goodbye's records at an address. Their cost: a record write (rare: only
    // a changed record is written, store/devices.ts refreshStmt) updates three more small entries.
    // DeviceStore's queries repeat these expressions word for word (SQLite uses an expression index
    // only then; store-indexes.test.ts checks the plans). json_valid first: a row whose JSON is
    // damaged gives NULL, never an error that would refuse its write.
    version: 15,
    description: 'devices: indexes by printer-uuid, MAC address and IP address',
    up(db) {
      db.exec(`
        CREATE INDEX devices_printer_uuid ON devices (CASE WHEN json_valid(printer_info) THEN json_extract(printer_info, '$.printer_uuid') END);
        CREATE INDEX devices_mac ON devices (lower(mac_address));
        CREATE INDEX devices_ip ON devices (ip);
      `);
    },
  },
  {
    // Roles: every account made before this was an administrator, and stays one.
    version: 16,
    description: "accounts.role: 'admin' or 'viewer'; existing accounts become admins",
    up(db) {
      db.exec(`ALTER TABLE accounts ADD COLUMN role TEXT NOT NULL DEFAULT 'admin' CHECK (role IN ('admin', 'viewer'))`);
    },
  },
  {
    // billing/: the meter reads a dealer bills from, one per saved printer and billing
    // period. A table of its own, not a tier: roll-ups and retention never read or thin it, so the
    // reads are kept for years (a few hundred bytes a printer a month). `source` says how the read
    // was made: `poll` (read at or after the billing time, within the billing day), `nearest` (the
    // printer stayed silent all day: the stored reading nearest the billing time), `missing` (none
    // within 7 days of it).
    version: 17,
    description: 'billing meter reads: one per printer and billing period, never thinned',
    up(db) {
      db.exec(`
        CREATE TABLE meter_reads (
          id INTEGER PRIMARY KEY,
          serial TEXT NOT NULL,
          period TEXT NOT NULL,                            -- YYYY-MM of the billing date, billing zone
          due_at INTEGER NOT NULL,                         -- epoch ms: the billing day and time
          read_at INTEGER,                                 -- epoch ms of the reading itself; NULL when missing
          source TEXT NOT NULL,                            -- poll | nearest | missing
          page_count INTEGER, color_pages INTEGER, mono_pages INTEGER, scan_count INTEGER,
          extra TEXT,                                      -- JSON: other counters of the reading
          attempts INTEGER NOT NULL DEFAULT 0,             -- polls tried before this read was kept
          created_at INTEGER NOT NULL                      -- epoch ms
        );
        CREATE UNIQUE INDEX meter_reads_serial_period ON meter_reads (serial, period);
        CREATE INDEX meter_reads_period ON meter_reads (period, serial);
      `);
    },
  },
  {
    // The category counters (print_pages, copy_pages, duplex_pages ...) a raw row keeps in `extra`
    // reached no aggregated tier: a month later they were gone. An aggregated row keeps each one's
    // value at the end of its bucket (max: counters are cumulative), as JSON beside toner_last.
    version: 18,
    description: 'metrics tiers: extra_max, the category counters at the end of each bucket',
    up(db) {
      for (const t of ['metrics_hourly', 'metrics_daily', 'metrics_monthly']) db.exec(`ALTER TABLE ${t} ADD COLUMN extra_max TEXT`);
    },
  },
  {
    // The central server stamps every reading of an upload batch with the batch's one time, so two
    // polls' readings in one batch became two rows per printer at one instant. Each raw
    // reading now keeps the round it was taken in (model/round.ts: its start time, epoch ms), and a
    // batch holds one round's (server/uploader.ts). Rows from before, and imports, have none (NULL):
    // for them a batch still never holds two readings of one printer. ADD COLUMN rewrites nothing.
    version: 19,
    description: 'metrics_raw: the reading round of each raw reading',
    up(db) {
      db.exec('ALTER TABLE metrics_raw ADD COLUMN round INTEGER');
    },
  },
  {
    // The weekly order-list e-mail (notify/order-list-mail.ts) goes through the outbox
    // like an alert digest, so it is retried and listed the same way; its row carries the message
    // made when it was due (subject, text, the CSV) rather than alerts. `scheduled_mail` says which
    // week's list was sent, in the same transaction as its outbox rows: never twice, even across a
    // restart, and a week whose list was empty is marked done too (nothing was sent).
    version: 20,
    description: 'outbox: prepared messages (the weekly order list) and the scheduled mails already made',
    up(db) {
      db.exec(`
        ALTER TABLE notification_outbox ADD COLUMN message TEXT;      -- JSON {subject, text, attachments}; NULL: an alert message
        CREATE TABLE scheduled_mail (
          key TEXT PRIMARY KEY,                            -- 'order-list YYYY-MM-DD' (the due day in the billing zone)
          due_at INTEGER NOT NULL,                         -- epoch ms
          done_at INTEGER NOT NULL,                        -- epoch ms
          items INTEGER NOT NULL,                          -- lines in the list (0: nothing was sent)
          recipients INTEGER NOT NULL                      -- outbox rows written
        );
      `);
    },
  },
  {
    // Whether to believe a printer's readings (a pending move, a flagged page counter, the MAC and
    // SNMPv3 engine trusted readings showed: model/trust.ts) becomes a column of its own, typed in
    // the record, instead of keys inside raw_data. The API and the backup still show them inside
    // raw_data. Stored records are moved over: the keys leave raw_data for the new column. A row
    // whose raw_data is not a JSON object keeps it as it is (the record reads it as before).
    version: 21,
    description: 'devices.trust: the trust state (pending move, flagged counter, trusted identity), out of raw_data',
    up(db) {
      db.exec('ALTER TABLE devices ADD COLUMN trust TEXT'); // JSON object
      const keys = ['pending_move', 'counter_flag', 'neighbour_mac', 'snmp_engine_id'];
      const rows = db
        .prepare(`SELECT serial, raw_data FROM devices WHERE json_valid(raw_data) AND json_type(raw_data) = 'object'
          AND (${keys.map((k) => `json_type(raw_data, '$.${k}') IS NOT NULL`).join(' OR ')})`)
        .all() as { serial: string; raw_data: string }[];
      const write = db.prepare('UPDATE devices SET raw_data = ?, trust = ? WHERE serial = ?');
      for (const row of rows) {
        const raw = JSON.parse(row.raw_data) as Record<string, unknown>;
        const trust: Record<string, unknown> = {};
        for (const k of keys) {
          if (k in raw) {
            trust[k] = raw[k];
            delete raw[k];
          }
        }
        write.run(JSON.stringify(raw), JSON.stringify(trust), row.serial);
      }
    },
  },
];

export const latestVersion = migrations[migrations.length - 1].version;

/**
 * Applies every migration above the database's version, each in one transaction. Two processes
 * may migrate the same file at once (at boot the agent starts beside provisioning): each
 * migration takes the write lock first (IMMEDIATE) and reads the version again under it, so the
 * second process finds the step done instead of applying it twice.
 */
export function migrate(db: Database, upTo: number = latestVersion): number {
  const version = () => db.pragma('user_version', { simple: true }) as number;
  let current = version();
  if (current > latestVersion) {
    // A newer agent wrote this file. Refuse rather than guess: downgrades must not touch data.
    throw new Error(`database schema version ${current} is newer than this agent supports (${latestVersion})`);
  }
  for (const m of migrations) {
    if (m.version <= current || m.version > upTo) continue;
    current = db.transaction(() => {
      const now = version();
      if (now >= m.version) return now;
      m.up(db);
      db.pragma(`user_version = ${m.version}`);
      return m.version;
    }).immediate();
  }
  return current;
}
