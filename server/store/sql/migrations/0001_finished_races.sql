-- The archive of finished races: one row per race, written once by the archiver (docs/STORAGE.md "The archive").
-- record: the race as Redis held it (state hash, both action lists, the event stream), MessagePack; the store
-- reads it back the same way it reads Redis, so a replay of an archived race is the replay of the live one.
CREATE TABLE finished_races (
    race_id     text PRIMARY KEY,
    finished_at timestamptz NOT NULL,
    profile     text NOT NULL,
    rated       boolean NOT NULL,
    archived_at timestamptz NOT NULL DEFAULT now(),
    record      bytea NOT NULL
);
CREATE INDEX finished_races_by_time ON finished_races (finished_at, race_id);
