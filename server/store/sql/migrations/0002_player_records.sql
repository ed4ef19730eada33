-- The books of registered players (docs/STORAGE.md "Player records"): accounts, ratings with one row per rated
-- result, histories and stats. Written by the booking of a finished race in one transaction; the leaderboard is a
-- query over ratings. Times are timestamptz; the store converts them to the services' milliseconds.
CREATE TABLE accounts (
    player_id    text PRIMARY KEY,
    handle       text NOT NULL,
    handle_lower text NOT NULL UNIQUE,
    bot          boolean NOT NULL,
    secret_hash  text NOT NULL,
    salt         text NOT NULL,
    kdf          text NOT NULL,
    created_at   timestamptz NOT NULL
);

-- A race booked once, whichever processes try (the booking's claim).
CREATE TABLE booked_races (
    race_id   text PRIMARY KEY,
    booked_at timestamptz NOT NULL DEFAULT now()
);

-- Each player's current Glicko-2 state per profile; listed: on the leaderboard (established, enough opponents).
CREATE TABLE ratings (
    profile    text NOT NULL,
    player_id  text NOT NULL,
    rating     double precision NOT NULL,
    deviation  double precision NOT NULL,
    volatility double precision NOT NULL,
    games      integer NOT NULL,
    last_at    timestamptz NOT NULL,
    listed     boolean NOT NULL,
    PRIMARY KEY (player_id, profile)
);
-- The leaderboard: best first, ties by player id (as Redis's ZREVRANGE), keyset pages.
CREATE INDEX ratings_leaderboard ON ratings (profile, rating DESC, player_id DESC) WHERE listed;

-- One row per rated result: the rating graph, and what a recomputation needs (outcome, opponent). Rows imported
-- from Redis (flowergarden db import-redis) come from history lines, which keep the rating rounded and no
-- volatility: theirs is NULL.
CREATE TABLE rated_results (
    race_id     text NOT NULL,
    player_id   text NOT NULL,
    profile     text NOT NULL,
    opponent_id text NOT NULL,
    finished_at timestamptz NOT NULL,
    outcome     text NOT NULL,
    rating      double precision NOT NULL,
    deviation   double precision NOT NULL,
    volatility  double precision,
    PRIMARY KEY (race_id, player_id)
);
CREATE INDEX rated_results_by_player ON rated_results (player_id, profile, finished_at);

-- A player's finished races from its side: item is the HistoryItem map (MessagePack), newest first by the index.
CREATE TABLE history (
    player_id   text NOT NULL,
    race_id     text NOT NULL,
    finished_at timestamptz NOT NULL,
    item        bytea NOT NULL,
    PRIMARY KEY (player_id, race_id)
);
CREATE INDEX history_newest_first ON history (player_id, finished_at DESC, race_id DESC);

-- A player's counters per profile, kept by the booking's transaction (average count: foundations / races).
CREATE TABLE stats (
    player_id     text NOT NULL,
    profile       text NOT NULL,
    races         integer NOT NULL,
    wins          integer NOT NULL,
    losses        integer NOT NULL,
    draws         integer NOT NULL,
    clears        integer NOT NULL,
    foundations   bigint NOT NULL,
    best_clear_ms integer,
    PRIMARY KEY (player_id, profile)
);

-- flowergarden db import-redis: how far each kind of record got (resumable), and when it finished.
CREATE TABLE redis_import (
    kind        text PRIMARY KEY,
    cursor      text NOT NULL,
    imported    bigint NOT NULL DEFAULT 0,
    finished_at timestamptz
);
