/*
 * Optional compiled core of the solver's search (shared/solver/search.py is the reference).
 *
 * It runs exactly the same weighted A* as search.best_first over exactly the same keys, children (in the same
 * order), forced moves, estimates and tie-breaking, so under a node budget both give the same verdict, the same
 * node count and the same path; tests/test_solver_native.py checks that. Only speed and memory differ. The
 * rules and the reasons they are sound are in docs/SOLVER.md and shared/solver/position.py.
 *
 * A key: 4 foundation heights, then the six columns sorted bytewise and joined by 0x7F. Tokens: 0..51 real
 * cards (suit * 13 + rank - 1), 52 + rank - 1 an anonymous bouquet card of that rank.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define VIRTUAL 52
#define SEP 0x7F
#define BOUQUET_SRC 6
#define FOUNDATION_DST 7
#define MAX_KEY 64
#define MAX_COLUMN 56
#define MAX_STEP 16
#define MAX_STEPS 1024

enum { GOAL_WON = 0, GOAL_FOUNDATION_MOVE = 1 };
enum { STATUS_GOAL = 0, STATUS_EXHAUSTED = 1, STATUS_SPENT = 2 };

typedef struct {
    uint8_t found[4];
    uint8_t len[6];
    uint8_t col[6][MAX_COLUMN];
} Pos;

typedef struct {
    uint8_t pool[15]; /* bit s: the search's starting bouquet holds suit s of this rank */
    int builds;
    int foundation_moves;
    int anonymous; /* the relaxed game: moved column cards and lone cards become anonymous tokens */
    int margin;    /* a real column card of rank r goes up by force when every rank r - margin card is up */
    int shuffles;  /* 0 in the finder: a card lying on a card one rank higher never moves onto another of that rank */
    int weights[5]; /* position.ESTIMATE_WEIGHTS: lift, above, blocked, king, empty */
} Rules;

typedef struct {
    uint8_t token, source, target;
} Move;

typedef struct {
    int count;
    Move moves[MAX_STEP];
} Step;

static const uint8_t TOKEN_RANK[VIRTUAL + 13] = {
    1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13,
    1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13,
};

static inline int token_rank(int token) { return TOKEN_RANK[token]; }

/* --- keys ---------------------------------------------------------------------------------------------- */

static int parse_key(const uint8_t *key, int length, Pos *pos) {
    if (length < 9) return -1;
    memcpy(pos->found, key, 4);
    int column = 0, size = 0;
    for (int i = 4; i < length; i++) {
        if (key[i] == SEP) {
            if (column >= 5) return -1;
            pos->len[column++] = (uint8_t)size;
            size = 0;
        } else {
            if (size >= MAX_COLUMN || key[i] >= VIRTUAL + 13) return -1;
            pos->col[column][size++] = key[i];
        }
    }
    if (column != 5) return -1;
    pos->len[5] = (uint8_t)size;
    return 0;
}

static int compare_columns(const Pos *pos, int a, int b) {
    int la = pos->len[a], lb = pos->len[b];
    if (la && lb && pos->col[a][0] != pos->col[b][0]) return (int)pos->col[a][0] - (int)pos->col[b][0];
    int common = la < lb ? la : lb;
    int order = memcmp(pos->col[a], pos->col[b], (size_t)common);
    if (order) return order;
    return la - lb;
}

static int make_key(const Pos *pos, uint8_t *out) {
    int order[6] = {0, 1, 2, 3, 4, 5};
    for (int i = 1; i < 6; i++) { /* insertion sort, stable like Python's sorted */
        int current = order[i], j = i - 1;
        while (j >= 0 && compare_columns(pos, order[j], current) > 0) {
            order[j + 1] = order[j];
            j--;
        }
        order[j + 1] = current;
    }
    memcpy(out, pos->found, 4);
    int length = 4;
    for (int i = 0; i < 6; i++) {
        if (i) out[length++] = SEP;
        memcpy(out + length, pos->col[order[i]], pos->len[order[i]]);
        length += pos->len[order[i]];
    }
    return length;
}

/* --- rules ----------------------------------------------------------------------------------------------- */

static void virtual_counts(const Pos *pos, int *counts) {
    memset(counts, 0, 15 * sizeof(int));
    for (int c = 0; c < 6; c++)
        for (int i = 0; i < pos->len[c]; i++)
            if (pos->col[c][i] >= VIRTUAL) counts[pos->col[c][i] - VIRTUAL + 1]++;
}

static inline int lowest_found(const Pos *pos) {
    int low = pos->found[0];
    for (int s = 1; s < 4; s++)
        if (pos->found[s] < low) low = pos->found[s];
    return low;
}

/* The fixpoint of the safe foundation moves (Expander.play_forced). */
static void play_forced(const Rules *rules, Pos *pos, const int *virtual_) {
    int builds = rules->builds, progress = 1;
    while (progress) {
        progress = 0;
        int lowest = lowest_found(pos);
        for (int c = 0; c < 6; c++) {
            while (pos->len[c]) {
                int token = pos->col[c][pos->len[c] - 1];
                if (token >= VIRTUAL) break;
                int rank = token % 13 + 1, suit = token / 13;
                if (pos->found[suit] != rank - 1 || (builds && (rank > lowest + rules->margin || virtual_[rank - 1]))) break;
                pos->len[c]--;
                pos->found[suit] = (uint8_t)rank;
                lowest = lowest_found(pos);
                progress = 1;
            }
        }
        int top = builds ? (lowest + 1 < 13 ? lowest + 1 : 13) : 13;
        for (int rank = 1; rank <= top; rank++) {
            if (builds && virtual_[rank]) continue;
            for (int suit = 0; suit < 4; suit++) {
                if ((rules->pool[rank] >> suit & 1) && pos->found[suit] == rank - 1) {
                    pos->found[suit] = (uint8_t)rank;
                    progress = 1;
                }
            }
        }
    }
    if (rules->anonymous)
        for (int c = 0; c < 6; c++)
            if (pos->len[c] == 1 && pos->col[c][0] < VIRTUAL) pos->col[c][0] = (uint8_t)(VIRTUAL + pos->col[c][0] % 13);
}

static inline void add_step(Step *steps, int *count, const Move *moves, int length) {
    if (*count >= MAX_STEPS) return;
    steps[*count].count = length;
    memcpy(steps[*count].moves, moves, (size_t)length * sizeof(Move));
    (*count)++;
}

/* Steps in the order of Expander.children: foundation steps, then column steps and bridges. */
static int list_steps(const Rules *rules, const Pos *pos, const int *virtual_, Step *steps) {
    int count = 0, pools[15], free_[15];
    uint64_t real = 0; /* relaxed game: cards lying on a column as themselves are not in the pool */
    if (rules->anonymous)
        for (int c = 0; c < 6; c++)
            for (int i = 0; i < pos->len[c]; i++)
                if (pos->col[c][i] < VIRTUAL) real |= 1ULL << pos->col[c][i];
    for (int rank = 0; rank < 15; rank++) {
        int mask = 0, size = 0;
        for (int suit = 0; suit < 4; suit++)
            if (rank >= 1 && rank <= 13 && pos->found[suit] < rank &&
                (rules->anonymous ? !(real >> (suit * 13 + rank - 1) & 1) : (rules->pool[rank] >> suit & 1))) {
                mask |= 1 << suit;
                size++;
            }
        pools[rank] = mask;
        free_[rank] = size - virtual_[rank];
    }
    Move move[MAX_STEP];
    if (rules->foundation_moves) {
        for (int c = 0; c < 6; c++) {
            if (!pos->len[c]) continue;
            int token = pos->col[c][pos->len[c] - 1], rank = token_rank(token);
            if (token < VIRTUAL) {
                if (pos->found[token / 13] == rank - 1) {
                    move[0] = (Move){(uint8_t)token, (uint8_t)c, FOUNDATION_DST};
                    add_step(steps, &count, move, 1);
                }
            } else {
                for (int suit = 0; suit < 4; suit++)
                    if ((pools[rank] >> suit & 1) && pos->found[suit] == rank - 1) {
                        move[0] = (Move){(uint8_t)(suit * 13 + rank - 1), (uint8_t)c, FOUNDATION_DST};
                        add_step(steps, &count, move, 1);
                    }
            }
        }
        for (int suit = 0; suit < 4; suit++) {
            int rank = pos->found[suit] + 1;
            if (rank <= 13 && free_[rank] > 0 && (pools[rank] >> suit & 1)) {
                move[0] = (Move){(uint8_t)(suit * 13 + rank - 1), BOUQUET_SRC, FOUNDATION_DST};
                add_step(steps, &count, move, 1);
            }
        }
    }
    if (!rules->builds) return count;
    int targets[15][6], target_count[15] = {0};
    for (int c = 0; c < 6; c++) {
        int rank = pos->len[c] ? token_rank(pos->col[c][pos->len[c] - 1]) : 0;
        targets[rank][target_count[rank]++] = c;
    }
    int first_empty = target_count[0] ? targets[0][0] : -1;
    for (int source = 0; source < 6; source++) {
        if (!pos->len[source]) continue;
        int token = pos->col[source][pos->len[source] - 1], rank = token_rank(token);
        int seated = pos->len[source] > 1 && token_rank(pos->col[source][pos->len[source] - 2]) == rank + 1;
        for (int i = 0; i < target_count[rank + 1] && (rules->shuffles || !seated); i++) {
            move[0] = (Move){(uint8_t)token, (uint8_t)source, (uint8_t)targets[rank + 1][i]};
            add_step(steps, &count, move, 1);
        }
        if (first_empty >= 0 && pos->len[source] > 1) {
            move[0] = (Move){(uint8_t)token, (uint8_t)source, (uint8_t)first_empty};
            add_step(steps, &count, move, 1);
        }
        int height = rank;
        while (height < 13 && free_[height + 1] > 0) {
            height++;
            int bridged = height - rank; /* tokens of ranks height .. rank+1, highest first */
            for (int i = 0; i < target_count[height + 1]; i++) {
                int target = targets[height + 1][i];
                if (target == source) continue;
                for (int k = 0; k < bridged; k++)
                    move[k] = (Move){(uint8_t)(VIRTUAL + height - k - 1), BOUQUET_SRC, (uint8_t)target};
                move[bridged] = (Move){(uint8_t)token, (uint8_t)source, (uint8_t)target};
                add_step(steps, &count, move, bridged + 1);
            }
        }
    }
    return count;
}

static void apply_step(const Rules *rules, Pos *pos, int *virtual_, const Step *step) {
    for (int i = 0; i < step->count; i++) {
        const Move *m = &step->moves[i];
        if (m->source == BOUQUET_SRC) {
            if (m->token >= VIRTUAL) virtual_[m->token - VIRTUAL + 1]++;
        } else {
            int top = pos->col[m->source][--pos->len[m->source]];
            if (top >= VIRTUAL && m->target == FOUNDATION_DST) virtual_[top - VIRTUAL + 1]--;
        }
        if (m->target == FOUNDATION_DST) {
            pos->found[m->token / 13]++;
        } else if (rules->anonymous && m->token < VIRTUAL) {
            virtual_[m->token % 13 + 1]++;
            pos->col[m->target][pos->len[m->target]++] = (uint8_t)(VIRTUAL + m->token % 13);
        } else {
            pos->col[m->target][pos->len[m->target]++] = m->token;
        }
    }
}

/* --- goals and estimates ------------------------------------------------------------------------------------ */

static int is_goal(int goal, const Pos *pos) {
    if (goal == GOAL_WON) return pos->found[0] == 13 && pos->found[1] == 13 && pos->found[2] == 13 && pos->found[3] == 13;
    for (int c = 0; c < 6; c++) {
        if (!pos->len[c]) continue;
        int token = pos->col[c][pos->len[c] - 1];
        if (token < VIRTUAL && pos->found[token / 13] == token % 13) return 1;
    }
    return 0;
}

static int column_cost(const Rules *rules, const uint8_t *column, int size) {
    if (!size) return -rules->weights[4];
    int ordered = 1;
    while (ordered < size && token_rank(column[ordered]) + 1 == token_rank(column[ordered - 1])) ordered++;
    int cost = 0, lowest[4] = {99, 99, 99, 99};
    for (int i = 0; i < size; i++) {
        int token = column[i], rank = token_rank(token), suit = token < VIRTUAL ? token / 13 : -1;
        if (i >= ordered) {
            cost += rules->weights[1];
            if (suit >= 0 && lowest[suit] < rank) cost += rules->weights[2];
            if (rank == 13) cost += rules->weights[3];
        }
        if (suit >= 0 && rank < lowest[suit]) lowest[suit] = rank;
    }
    return cost;
}

static int estimate(const Rules *rules, int goal, const Pos *pos) {
    if (goal == GOAL_WON) {
        int total = rules->weights[0] * (52 - pos->found[0] - pos->found[1] - pos->found[2] - pos->found[3]);
        for (int c = 0; c < 6; c++) total += column_cost(rules, pos->col[c], pos->len[c]);
        return total > 0 ? total : 0;
    }
    int best = 52;
    for (int c = 0; c < 6; c++)
        for (int i = 0; i < pos->len[c]; i++) {
            int token = pos->col[c][i];
            if (token < VIRTUAL && pos->found[token / 13] == token % 13 && pos->len[c] - 1 - i < best)
                best = pos->len[c] - 1 - i;
        }
    return best;
}

/* --- the store: keys (packed in an arena), parents and a hash index ---------------------------------------------------- */

typedef struct {
    uint8_t *arena;
    size_t arena_used, arena_capacity;
    uint32_t *offsets; /* arena offset of each key; its length follows from the next offset */
    uint32_t *parents;
    size_t count, capacity;
    uint64_t *slots; /* (hash << 32) | (index + 1), 0 when free: most probes never touch the arena */
    size_t slot_mask;
} Store;

static inline const uint8_t *store_key(const Store *store, size_t i) { return store->arena + store->offsets[i]; }
static inline int store_length(const Store *store, size_t i) {
    size_t end = i + 1 < store->count ? store->offsets[i + 1] : store->arena_used;
    return (int)(end - store->offsets[i]);
}

/* Any hash gives the same search (it only places keys in the index); this one takes eight bytes a step. */
static uint32_t hash_key(const uint8_t *key, int length) {
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ (uint64_t)length;
    int i = 0;
    for (; i + 8 <= length; i += 8) {
        uint64_t word;
        memcpy(&word, key + i, 8);
        h = (h ^ word) * 0xFF51AFD7ED558CCDULL;
        h ^= h >> 32;
    }
    uint64_t tail = 0;
    memcpy(&tail, key + i, (size_t)(length - i));
    h = (h ^ tail) * 0xC4CEB9FE1A85EC53ULL;
    h ^= h >> 29;
    return (uint32_t)(h ^ (h >> 32));
}

static int store_grow_slots(Store *store) {
    size_t size = store->slot_mask ? (store->slot_mask + 1) * 2 : 1 << 16;
    uint64_t *slots = calloc(size, sizeof(uint64_t));
    if (!slots) return -1;
    for (size_t i = 0; i <= store->slot_mask && store->slots; i++) {
        uint64_t slot = store->slots[i];
        if (!slot) continue;
        size_t at = (size_t)(slot >> 32) & (size - 1);
        while (slots[at]) at = (at + 1) & (size - 1);
        slots[at] = slot;
    }
    free(store->slots);
    store->slots = slots;
    store->slot_mask = size - 1;
    return 0;
}

static int store_grow_records(Store *store) {
    size_t capacity = store->capacity ? store->capacity * 2 : 1 << 15;
    void *offsets = realloc(store->offsets, capacity * sizeof(uint32_t));
    if (!offsets) return -1;
    store->offsets = offsets;
    void *parents = realloc(store->parents, capacity * sizeof(uint32_t));
    if (!parents) return -1;
    store->parents = parents;
    store->capacity = capacity;
    return 0;
}

static int store_reserve_arena(Store *store, size_t extra) {
    if (store->arena_used + extra <= store->arena_capacity) return 0;
    size_t capacity = store->arena_capacity ? store->arena_capacity * 2 : 1 << 20;
    if (capacity > UINT32_MAX) return -1;
    void *arena = realloc(store->arena, capacity);
    if (!arena) return -1;
    store->arena = arena;
    store->arena_capacity = capacity;
    return 0;
}

/* 1 if inserted (index in *index), 0 if already present, -1 when out of memory. Load stays under 3/4.
 * ``hash`` is hash_key(key, length), computed by the caller so that it can prefetch the slot. */
static int store_insert(Store *store, const uint8_t *key, int length, uint32_t hash, uint32_t parent, uint32_t *index) {
    if ((store->count + 1) * 4 > (store->slot_mask + 1) * 3 && store_grow_slots(store)) return -1;
    uint64_t h = hash;
    size_t at = (size_t)h & store->slot_mask;
    while (store->slots[at]) {
        uint64_t slot = store->slots[at];
        if (slot >> 32 == h) {
            uint32_t other = (uint32_t)slot - 1;
            if (store_length(store, other) == length && !memcmp(store_key(store, other), key, (size_t)length)) return 0;
        }
        at = (at + 1) & store->slot_mask;
    }
    if ((store->count == store->capacity && store_grow_records(store)) || store_reserve_arena(store, (size_t)length))
        return -1;
    size_t i = store->count++;
    store->offsets[i] = (uint32_t)store->arena_used;
    memcpy(store->arena + store->arena_used, key, (size_t)length);
    store->arena_used += (size_t)length;
    store->parents[i] = parent;
    store->slots[at] = h << 32 | (uint64_t)(i + 1);
    *index = (uint32_t)i;
    return 1;
}

static void store_free(Store *store) {
    free(store->arena);
    free(store->offsets);
    free(store->parents);
    free(store->slots);
}

/* --- the open list: a 4-ary heap ordered by (priority, estimate, counter), the Python tuples' order ------------------------
 * Entries are unique (the counter), so any heap pops them in exactly the order of Python's heapq; four children per
 * node only means fewer levels, hence fewer cache misses, than a binary heap. */

typedef struct {
    uint32_t priority; /* steps * denominator + estimate * numerator */
    uint32_t index;
    uint64_t tie;      /* estimate << 32 | counter */
} Entry;

typedef struct {
    Entry *items;
    size_t size, capacity;
} Heap;

#define HEAP_ARITY 4

static inline int entry_less(const Entry *a, const Entry *b) {
    return a->priority != b->priority ? a->priority < b->priority : a->tie < b->tie;
}

/* Put ``moving`` at slot i or below, moving smaller children up. */
static void sift_down(Heap *heap, size_t i, Entry moving) {
    for (;;) {
        size_t first = HEAP_ARITY * i + 1;
        if (first >= heap->size) break;
        size_t last = first + HEAP_ARITY < heap->size ? first + HEAP_ARITY : heap->size, best = first;
        for (size_t child = first + 1; child < last; child++)
            if (entry_less(&heap->items[child], &heap->items[best])) best = child;
        if (!entry_less(&heap->items[best], &moving)) break;
        heap->items[i] = heap->items[best];
        i = best;
    }
    heap->items[i] = moving;
}

static int heap_push(Heap *heap, Entry entry) {
    if (heap->size == heap->capacity) {
        size_t capacity = heap->capacity ? heap->capacity * 2 : 1 << 15;
        Entry *items = realloc(heap->items, capacity * sizeof(Entry));
        if (!items) return -1;
        heap->items = items;
        heap->capacity = capacity;
    }
    size_t i = heap->size++;
    while (i) {
        size_t up = (i - 1) / HEAP_ARITY;
        if (!entry_less(&entry, &heap->items[up])) break;
        heap->items[i] = heap->items[up];
        i = up;
    }
    heap->items[i] = entry;
    return 0;
}

static Entry heap_pop(Heap *heap) {
    Entry top = heap->items[0], last = heap->items[--heap->size];
    if (heap->size) sift_down(heap, 0, last);
    return top;
}

/* Reorder the whole heap for a new weight (search.Switch): each entry's steps follow from its old priority. */
static void heap_reweigh(Heap *heap, int numerator, int denominator, int new_numerator, int new_denominator) {
    for (size_t i = 0; i < heap->size; i++) {
        Entry *entry = &heap->items[i];
        long long estimate_ = (long long)(entry->tie >> 32);
        long long steps = ((long long)entry->priority - estimate_ * numerator) / denominator;
        long long priority = steps * new_denominator + estimate_ * new_numerator;
        entry->priority = (uint32_t)(priority > UINT32_MAX ? UINT32_MAX : priority);
    }
    for (size_t start = heap->size / HEAP_ARITY + 1; start-- > 0;)
        if (start < heap->size) sift_down(heap, start, heap->items[start]);
}

static inline Entry make_entry(long long steps, int estimate_, uint32_t counter, uint32_t index, int numerator, int denominator) {
    long long priority = steps * denominator + (long long)estimate_ * numerator;
    Entry entry = {(uint32_t)(priority > UINT32_MAX ? UINT32_MAX : priority), index, (uint64_t)(uint32_t)estimate_ << 32 | counter};
    return entry;
}

/* A child position being generated: its key and the key's hash. */
typedef struct {
    Pos pos;
    uint8_t key[MAX_KEY];
    int length;
    uint32_t hash;
} Child;

/* --- the search ------------------------------------------------------------------------------------------------------- */

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static PyObject *path_list(const Store *store, uint32_t index) {
    Py_ssize_t depth = 1;
    for (uint32_t i = index; store->parents[i] != UINT32_MAX; i = store->parents[i]) depth++;
    PyObject *list = PyList_New(depth);
    if (!list) return NULL;
    for (uint32_t i = index;; i = store->parents[i]) {
        PyObject *key = PyBytes_FromStringAndSize((const char *)store_key(store, i), store_length(store, i));
        if (!key) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, --depth, key);
        if (store->parents[i] == UINT32_MAX) break;
    }
    return list;
}

static PyObject *native_search(PyObject *self, PyObject *args) {
    (void)self;
    const char *root;
    Py_ssize_t root_length, pool_length;
    const char *pool;
    int builds, foundation_moves, anonymous, shuffles, goal;
    int numerator, denominator;
    double seconds, switch_seconds;
    long long max_nodes, max_stored, switch_nodes;
    int switch_numerator, switch_denominator;
    Rules rules;
    if (!PyArg_ParseTuple(args, "y#y#ppppi(ii)dLL(iiiii)dL(ii)", &root, &root_length, &pool, &pool_length, &builds,
                          &foundation_moves, &anonymous, &shuffles, &goal, &numerator, &denominator, &seconds, &max_nodes, &max_stored,
                          &rules.weights[0], &rules.weights[1], &rules.weights[2], &rules.weights[3], &rules.weights[4],
                          &switch_seconds, &switch_nodes, &switch_numerator, &switch_denominator))
        return NULL;
    Pos pos;
    if (pool_length != 15 || root_length > MAX_KEY || parse_key((const uint8_t *)root, (int)root_length, &pos)) {
        PyErr_SetString(PyExc_ValueError, "not a search key and pool");
        return NULL;
    }
    memcpy(rules.pool, pool, 15);
    rules.builds = builds;
    rules.foundation_moves = foundation_moves;
    rules.anonymous = anonymous;
    rules.shuffles = shuffles;
    rules.margin = anonymous ? 1 : 2;

    Store store = {0};
    Heap heap = {0};
    Step *steps = malloc(MAX_STEPS * sizeof(Step));
    Child *children = malloc(MAX_STEPS * sizeof(Child));
    int status = STATUS_SPENT, failed = 0, interrupted = 0;
    uint32_t found_index = 0, best_index = 0, root_index = 0;
    long long expanded = 0;
    if (!steps || !children || store_insert(&store, (const uint8_t *)root, (int)root_length, hash_key((const uint8_t *)root, (int)root_length), UINT32_MAX, &root_index) < 0) {
        free(steps);
        free(children);
        store_free(&store);
        return PyErr_NoMemory();
    }

    Py_BEGIN_ALLOW_THREADS
    double deadline = seconds >= 0 ? now_seconds() + seconds : 0;
    double switch_deadline = switch_seconds >= 0 ? now_seconds() + switch_seconds : 0;
    int switching = switch_seconds >= 0 || switch_nodes >= 0;
    if (is_goal(goal, &pos)) {
        status = STATUS_GOAL;
        found_index = root_index;
    } else {
        int root_estimate = estimate(&rules, goal, &pos), best_estimate = root_estimate;
        uint32_t counter = 0;
        if (heap_push(&heap, make_entry(0, root_estimate, 0, root_index, numerator, denominator))) failed = 1;
        while (!failed && heap.size) {
            if ((max_nodes >= 0 && expanded >= max_nodes) ||
                (seconds >= 0 && (expanded & 63) == 0 && now_seconds() > deadline) ||
                (long long)store.count > max_stored) {
                status = STATUS_SPENT;
                goto done;
            }
            if (switching && ((switch_nodes >= 0 && expanded >= switch_nodes) ||
                              (switch_seconds >= 0 && (expanded & 63) == 0 && now_seconds() > switch_deadline))) {
                heap_reweigh(&heap, numerator, denominator, switch_numerator, switch_denominator);
                numerator = switch_numerator;
                denominator = switch_denominator;
                switching = 0;
            }
            if ((expanded & 4095) == 4095) {
                Py_BLOCK_THREADS
                interrupted = PyErr_CheckSignals() < 0;
                Py_UNBLOCK_THREADS
                if (interrupted) goto done;
            }
            Entry entry = heap_pop(&heap);
            expanded++;
            int entry_estimate = (int)(entry.tie >> 32);
            long long entry_steps = ((long long)entry.priority - (long long)entry_estimate * numerator) / denominator;
            if (entry_estimate < best_estimate) {
                best_estimate = entry_estimate;
                best_index = entry.index;
            }
            Pos parent;
            parse_key(store_key(&store, entry.index), store_length(&store, entry.index), &parent);
            int virtual_[15];
            virtual_counts(&parent, virtual_);
            int step_count = list_steps(&rules, &parent, virtual_, steps);
            /* First every child's key and hash, prefetching its index slot; then the inserts, in step order. */
            for (int s = 0; s < step_count; s++) {
                Child *child = &children[s];
                child->pos = parent;
                int child_virtual[15];
                memcpy(child_virtual, virtual_, sizeof child_virtual);
                apply_step(&rules, &child->pos, child_virtual, &steps[s]);
                if (rules.foundation_moves) play_forced(&rules, &child->pos, child_virtual);
                child->length = make_key(&child->pos, child->key);
                child->hash = hash_key(child->key, child->length);
                __builtin_prefetch(&store.slots[child->hash & store.slot_mask]);
            }
            for (int s = 0; s < step_count; s++) {
                const Pos *child = &children[s].pos;
                uint32_t index;
                int inserted = store_insert(&store, children[s].key, children[s].length, children[s].hash, entry.index, &index);
                if (inserted < 0) {
                    failed = 1;
                    break;
                }
                if (!inserted) continue;
                if (is_goal(goal, child)) {
                    status = STATUS_GOAL;
                    found_index = index;
                    goto done;
                }
                int child_estimate = estimate(&rules, goal, child);
                counter++;
                if (heap_push(&heap, make_entry(entry_steps + 1, child_estimate, counter, index, numerator, denominator))) {
                    failed = 1;
                    break;
                }
            }
        }
        if (!failed) status = STATUS_EXHAUSTED;
    }
done:
    Py_END_ALLOW_THREADS

    free(steps);
    free(children);
    free(heap.items);
    PyObject *result = NULL;
    if (!interrupted) {
        if (failed) status = STATUS_SPENT; /* out of memory: no verdict */
        PyObject *path = status == STATUS_GOAL ? path_list(&store, found_index) : PyList_New(0);
        PyObject *best = status == STATUS_GOAL ? PyList_New(0) : path_list(&store, best_index);
        if (path && best) result = Py_BuildValue("iOLO", status, path, expanded, best);
        Py_XDECREF(path);
        Py_XDECREF(best);
    }
    store_free(&store);
    return result;
}

static PyMethodDef methods[] = {
    {"search", native_search, METH_VARARGS,
     "search(root, pool, builds, foundation_moves, anonymous, shuffles, goal, (numerator, denominator), seconds, max_nodes, max_stored, "
     "weights, switch_seconds, switch_nodes, switch_weight) -> "
     "(status, goal_path, nodes, best_path): the compiled twin of shared.solver.search.best_first."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_native", "Compiled search core of the solver.", -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__native(void) { return PyModule_Create(&module); }
