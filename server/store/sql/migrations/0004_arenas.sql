-- Finished arena tournaments (docs/STORAGE.md "Arena tournaments"): written once an arena's clock ran out and its
-- last races were booked, in one transaction per arena, by the archiver; Redis keeps the live arenas and a
-- short-lived cache of finished ones. Times are timestamptz; the store converts them to the services' milliseconds.
CREATE TABLE arenas (
    arena_id    text PRIMARY KEY,
    name        text NOT NULL,
    start_at    timestamptz NOT NULL,
    end_at      timestamptz NOT NULL,
    private     boolean NOT NULL,
    meta        jsonb NOT NULL,                 -- every field of the arena's Redis meta hash, as text
    archived_at timestamptz NOT NULL DEFAULT now()
);
-- The list of finished listed arenas, newest first.
CREATE INDEX arenas_listed_by_end ON arenas (end_at DESC) WHERE NOT private;

-- The final table: each player who joined, as it joined (handle, name, account, bot, the rating then: the
-- tie-break's) and its final score.
CREATE TABLE arena_players (
    arena_id  text NOT NULL REFERENCES arenas (arena_id),
    player_id text NOT NULL,
    handle    text NOT NULL,
    name      text NOT NULL,
    account   text,
    bot       boolean NOT NULL,
    rating    double precision NOT NULL,
    score     integer NOT NULL,
    PRIMARY KEY (arena_id, player_id)
);
CREATE INDEX arena_players_by_player ON arena_players (player_id);

-- Each player's finished races of the arena from its side, in order (seq from 0): the scores and the standings'
-- fire, berserks and performance are computed from these rows as from Redis's lists.
CREATE TABLE arena_games (
    arena_id        text NOT NULL REFERENCES arenas (arena_id),
    player_id       text NOT NULL,
    seq             integer NOT NULL,
    race_id         text NOT NULL,
    opponent_id     text NOT NULL,
    outcome         text NOT NULL,
    berserk         boolean NOT NULL,
    moves           integer NOT NULL,
    opponent_rating double precision NOT NULL,
    PRIMARY KEY (arena_id, player_id, seq)
);
