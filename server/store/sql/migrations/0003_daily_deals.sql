-- The daily deal's finished days (docs/STORAGE.md "The daily deal"): written once a day is over by the daily deal's
-- archiving step, in one transaction per day; Redis keeps the live day and a short-lived cache of the past ones.
-- Times are timestamptz; the store converts them to the services' milliseconds.
CREATE TABLE daily_days (
    day           text PRIMARY KEY,            -- YYYY-MM-DD (UTC)
    seed          bigint NOT NULL,
    salt          text NOT NULL,               -- hex
    line          text[] NOT NULL,             -- the solver's proving line
    commitment    text NOT NULL,
    profile       text NOT NULL,
    difficulty    text,                        -- NULL: not tiered
    time_limit_ms integer NOT NULL,
    opens_at      timestamptz NOT NULL,
    closes_at     timestamptz NOT NULL,
    archived_at   timestamptz NOT NULL DEFAULT now()
);

-- Each counted attempt of a finished day (one per account and day) with its moves and their times after its start:
-- the day's leaderboard, replays and statistics are computed from these rows as from Redis's.
CREATE TABLE daily_attempts (
    day        text NOT NULL REFERENCES daily_days (day),
    attempt    text NOT NULL,                  -- its key within the day
    player_id  text NOT NULL,
    handle     text,
    started_at timestamptz NOT NULL,
    deadline   timestamptz NOT NULL,
    state      text NOT NULL,                  -- as Redis held it; a playing attempt past its deadline reads as timed out
    count      integer NOT NULL,
    ended_at   timestamptz,
    moves      text[] NOT NULL,
    times      integer[] NOT NULL,
    PRIMARY KEY (day, attempt)
);
-- A replay by handle, and a player's cleared days (the calendar and streaks).
CREATE INDEX daily_attempts_by_handle ON daily_attempts (day, lower(handle));
CREATE INDEX daily_attempts_cleared ON daily_attempts (player_id, day) WHERE state = 'cleared';
