"""The Redis store: the only package that knows key names and Lua scripts (docs/STORAGE.md)."""

from server.store.analysis_store import AnalysisStore
from server.store.arena_store import ArenaStore
from server.store.connection import commands_waiting, connect_redis
from server.store.daily_store import DailyDeal, DailyStore, StoredAttempt
from server.store.direct_channels import AnyRaceChannels, DirectRaceChannels
from server.store.errors import StoreError, StoreUnavailable
from server.store.lobby_store import GuessLimit, InviteLimits, InviteRefusal, LobbyChange, LobbyFeedReader, LobbyStore
from server.store.ops_store import Ban, BanKind, OpsStore
from server.store.player_store import (
    AccountRecord,
    LoginAdmission,
    LoginBudget,
    LoginLimit,
    PairRules,
    PairSignals,
    PlayerStore,
    RatedRefusal,
    SeatBooking,
    StoredRating,
    rating_of,
)
from server.store.quick_match_store import Partner, QueueEntry, QuickMatchStore
from server.store.race_channel import LiveEvent, RaceChannels, ShardedRaceChannels, Subscribed, sharded_channels_supported
from server.store.race_store import (
    ANALYSIS_SAFETY_MS,
    UNDECODABLE_EVENTS,
    ApplyResult,
    Identity,
    NewRace,
    RaceIdTaken,
    RaceRecord,
    RaceStore,
    RematchOffer,
    SealedDeal,
    SeatRecord,
    StaleEpoch,
    StoredEvent,
    StoreRefusal,
    UndecodableEvent,
    deal_texts,
    presence_member,
)
from server.store.seed_pool_store import PooledSeed, SeedPoolStore
from server.store.session_store import SessionRecord, SessionStore

__all__ = [
    "ANALYSIS_SAFETY_MS",
    "UNDECODABLE_EVENTS",
    "AccountRecord",
    "AnalysisStore",
    "AnyRaceChannels",
    "ApplyResult",
    "ArenaStore",
    "Ban",
    "BanKind",
    "DailyDeal",
    "DailyStore",
    "DirectRaceChannels",
    "GuessLimit",
    "Identity",
    "InviteLimits",
    "InviteRefusal",
    "LiveEvent",
    "LobbyChange",
    "LobbyFeedReader",
    "LobbyStore",
    "LoginAdmission",
    "LoginBudget",
    "LoginLimit",
    "NewRace",
    "OpsStore",
    "PairRules",
    "PairSignals",
    "Partner",
    "PlayerStore",
    "PooledSeed",
    "QueueEntry",
    "QuickMatchStore",
    "RaceChannels",
    "RaceIdTaken",
    "RaceRecord",
    "RaceStore",
    "RatedRefusal",
    "RematchOffer",
    "SealedDeal",
    "SeatBooking",
    "SeatRecord",
    "SeedPoolStore",
    "SessionRecord",
    "SessionStore",
    "ShardedRaceChannels",
    "StaleEpoch",
    "StoreError",
    "StoreRefusal",
    "StoreUnavailable",
    "StoredAttempt",
    "StoredEvent",
    "StoredRating",
    "Subscribed",
    "UndecodableEvent",
    "commands_waiting",
    "connect_redis",
    "deal_texts",
    "presence_member",
    "rating_of",
    "sharded_channels_supported",
]
