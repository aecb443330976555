"""The tree searches of ``Solvers``: beam search, DeepCubeA's weighted A* and seed 003's
greedy best-first search, each over one cube, and the lockstep driver that runs many cubes'
searches with one network call per round.

* ``beam``: each depth the children of the whole beam are evaluated in one call, duplicate
  states and states an earlier beam held are removed and the ``beam_width`` best are kept:
  ranked by value (``rank="value"``, only new states are evaluated) or by cumulative policy
  log-probability (``"policy"``, for a network trained on scrambles that has no value head
  worth reading), or both (``"mixed"``): the ``MIXED_PROPOSALS * beam_width`` children of highest
  cumulative log-probability are read (value and logits in one forward pass) and the
  ``beam_width`` of highest value kept; one forward per proposal instead of one per child.
  States are told apart by ``beam_keys`` (one int64 each). Since no state an
  earlier beam held comes back, a beam cannot repeat itself (CayleyPy detects that, bans those
  states and restarts); ``max_depth`` caps the steps. ``ends`` (``End_Table``): a beam that reaches a
  state within the table's radius of solved finishes from the table, never longer, sooner.
  ``beam_widening``: beams of doubling width until a time limit, the shortest solution kept.
* ``astar``: ``f = lambda * g + h`` with ``h`` the value read as moves (``Puzzles.value_as_moves``, at least 0).
  With ``lambda = 1`` and an exact heuristic it is optimal.
* ``bestfirst``: seed 003's search on a hand heuristic (same-colour sticker pairs minus 4 per
  move taken); no network.

Lockstep: ``beam``/``astar`` search one cube; ``beam_lockstep``/``astar_lockstep`` (what
``Solvers.solve_cubes`` runs) search many at once, in groups of up to ``LOCKSTEP_CHUNK`` cubes.
Each cube's search is one generator (``_beam_search``, ``_astar_search``) that yields the states
it wants evaluated; the driver sends each its own rows of one joint network call, so a cube
takes exactly the steps it takes alone (for a value that is a function of the position; a
network's float rounding can differ slightly with the batch). Budgets stay per cube; a
``seconds`` limit is read on the cube's share of the lockstep rounds it took part in.

Every search reads the puzzle (``Puzzles.Puzzle``; default the 2x2) for its stickers, moves,
solved test, mask rule and state keys, and plays only moves the env's mask allows.
"""

from __future__ import annotations

import functools
import heapq
import itertools
import time
from collections.abc import Callable, Generator

import numpy as np

from cube.Cube_Model import NO_ACTION, face_adjacent_pairs
from cube.End_Table import EndTable
from cube.Puzzles import Puzzle, beam_keys, get_puzzle, value_as_moves
from cube.Solver_Base import PolicyFn, SolveResult, ValueFn, log_softmax, start_history, verify
from Rubik2x2Env import MAX_MOVES

BEAM_RANKS = ("value", "policy", "mixed")
#: mixed rank: children the policy proposes per beam place, among which the value picks.
MIXED_PROPOSALS = 4
F_DECIMALS = 6  # A* compares f = lambda * g + h to a millionth of a move
#: a beam out of time plans for at least this many depths after the next (its value's count when more;
#: measured: docs/design_notes.md, "NARROW_DEPTHS")
NARROW_DEPTHS = 3.0

#: A per-cube search written as a generator: it yields the states it needs evaluated (one
#: request per network call it would make), is sent back ``fn(states)`` for exactly those
#: states, and returns its ``SolveResult`` (``seconds`` filled in by the driver). One
#: implementation of each search's rule, run alone (``_run_one``) or many in lockstep.
Search = Generator[np.ndarray, np.ndarray, SolveResult]
#: ``clock()``: the seconds a search has spent so far, for its ``seconds`` budget.
Clock = Callable[[], float]


class StopSearch(Exception):
    """Thrown into a beam search at its request: it ends unsolved, with the states it generated so far
    (``_lockstep``'s ``siblings``: another view of its cube has solved it, and shorter)."""


LOCKSTEP_CHUNK = 512  # cubes per lockstep group of beam / astar (bounds the joint network batch)
LOCKSTEP_STATES = 1 << 20  # beam: children of one group's beams at most (groups shrink for wide beams)
LOCKSTEP_NODES = 1 << 22  # astar: node budgets of one group at most (its graphs and heaps live together)


def _run_one(start: Callable[[Clock], Search], fn) -> SolveResult:
    """Run one search alone: each request straight to ``fn``; ``seconds`` is its wall time."""
    began = time.perf_counter()
    search = start(lambda: time.perf_counter() - began)
    try:
        request = next(search)
        while True:
            request = search.send(fn(request))
    except StopIteration as stop:
        result = stop.value
    result.seconds = time.perf_counter() - began
    return result


def _lockstep(
    start: Callable[[int, Clock], Search], n: int, fn, chunk: int, siblings: np.ndarray | None = None
) -> list[SolveResult]:
    """Run the searches of cubes ``0..n-1`` in lockstep groups of ``chunk``: each round, the
    requests of every unfinished search of the group go through one ``fn`` call, and each
    search gets back the rows of its own states. A search sees exactly the values it would
    see alone (``fn`` being a function of each position), so it takes the same steps.

    ``siblings`` (beam searches only: one request a depth): searches ``i`` and ``j`` with
    ``siblings[i] == siblings[j]`` solve one cube (views of it, ``Solver_Views``). Once one of them has
    solved it, the group's others still running are stopped (``StopSearch``): started together, they are
    all a depth deeper now, so none could find a shorter solution, and only the shortest is kept.

    Time: a search's ``clock`` (its ``seconds`` budget) counts its own work between requests as it
    runs, and its share of each joint network call, in proportion to the states it asked for (so a
    narrowing beam's clock slows with its width), counted before it runs on with the reply.
    The result's ``seconds`` is the group's wall time shared evenly among its cubes (as for
    ``greedy`` and ``mcts``), so ``sum(r.seconds)`` is the total.
    """
    results: list[SolveResult | None] = [None] * n
    for lo in range(0, n, chunk):
        size = min(chunk, n - lo)
        began = time.perf_counter()
        spent = np.zeros(size)
        busy = [-1, 0.0]  # the search running now and since when: its clock counts that too
        live: dict[int, tuple[Search, np.ndarray]] = {}

        def clock(k: int) -> float:
            return spent[k] + (time.perf_counter() - busy[1] if busy[0] == k else 0.0)

        def advance(k: int, search: Search, reply) -> None:
            busy[:] = [k, time.perf_counter()]
            try:
                live[k] = (search, next(search) if reply is None else search.send(reply))
            except StopIteration as stop:
                results[lo + k] = stop.value
            finally:
                spent[k] += time.perf_counter() - busy[1]
                busy[0] = -1

        def stop_siblings(ran: list[int]) -> None:
            """End the live searches of every cube that one of ``ran`` has just solved."""
            if siblings is None:
                return
            solved = {siblings[lo + k] for k in ran if k not in live and results[lo + k].solved}
            for k in [k for k in live if siblings[lo + k] in solved]:
                try:
                    live.pop(k)[0].throw(StopSearch)
                except StopIteration as stop:
                    results[lo + k] = stop.value

        for k in range(size):
            advance(k, start(lo + k, functools.partial(clock, k)), None)
        stop_siblings(list(range(size)))
        while live:
            keys = list(live)
            searches, requests = zip(*(live.pop(k) for k in keys))
            rows = np.array([len(r) for r in requests])
            tick = time.perf_counter()
            replies = np.asarray(fn(np.concatenate(requests)))
            # before the searches run on: each reads its clock with this round's share in it
            spent[keys] += (time.perf_counter() - tick) * rows / max(rows.sum(), 1)
            bounds = np.cumsum(rows)[:-1]
            for k, search, reply in zip(keys, searches, np.split(replies, bounds)):
                advance(k, search, reply)
            stop_siblings(keys)
        share = (time.perf_counter() - began) / size
        for k in range(size):
            results[lo + k].seconds = share
    return results


# --------------------------------------------------------------------------- beam search
def beam(
    cube: np.ndarray,
    value_fn: ValueFn | None = None,
    policy_fn: PolicyFn | None = None,
    last: int = NO_ACTION,
    count: int = 0,
    beam_width: int = 100,
    max_depth: int = MAX_MOVES,
    max_nodes: int = 200_000,
    rank: str = "value",
    seconds: float | None = None,
    puzzle: Puzzle | str | None = None,
    by_position: bool = False,
    ends: EndTable | None = None,
) -> SolveResult:
    """Beam search from one cube; stops at the first depth where a child is solved (with ``ends``, an
    ``End_Table.EndTable``: where a child is within its radius of solved, finished from the table).

    ``rank="value"``: keep the ``beam_width`` children with the highest ``value_fn``;
    ``"policy"``: the highest cumulative log-softmax of ``policy_fn`` along the path (the
    policy is evaluated on the beam, its children need no evaluation). A state reached twice
    within one depth is kept once (its best-ranked copy); ties keep beam order, then the
    lowest action. Budgets: ``max_depth`` moves, ``max_nodes`` children generated (never
    exceeded: a depth that would exceed it is not started), ``seconds`` (a depth that would end past
    it, at the last depth's cost, is run on the best states whose depth takes its share of the time
    left (``_width_that_fits``), so a search out of time narrows towards greedy instead of giving up;
    it stops when not one state's depth would fit).
    ``by_position``: states are "the same" when they are one position up to a whole-cube turn (``Puzzle.position_keys``;
    for a network with a canonical orientation, which cannot tell them apart), so the beam
    never spends two places on one position. ``ends`` never makes a solution longer and ends the
    search at least its radius of depths sooner (``End_Table``).
    ``beam_lockstep`` runs the same search for many cubes in lockstep.
    """
    fn = _beam_fn(rank, value_fn, policy_fn)
    puzzle = get_puzzle(puzzle)
    return _run_one(
        lambda clock: _beam_search(
            cube, last, count, beam_width, max_depth, max_nodes, rank, seconds, clock, puzzle, by_position, ends
        ),
        fn,
    )


def beam_lockstep(
    cubes: np.ndarray,
    value_fn: ValueFn | None = None,
    policy_fn: PolicyFn | None = None,
    last=None,
    count=None,
    beam_width: int = 100,
    max_depth: int = MAX_MOVES,
    max_nodes: int = 200_000,
    rank: str = "value",
    seconds: float | None = None,
    chunk: int = LOCKSTEP_CHUNK,
    puzzle: Puzzle | str | None = None,
    by_position: bool = False,
    siblings: np.ndarray | None = None,
    ends: EndTable | None = None,
) -> list[SolveResult]:
    """``beam`` from every cube, in lockstep groups of up to ``chunk`` cubes: per depth, the
    children (policy rank: the beams) of every unfinished cube go through one network call,
    then each cube keeps its own best ``beam_width``. Same moves, ``solved`` and ``nodes`` per
    cube as ``beam``; budgets are per cube (``seconds``: see ``_lockstep``). ``siblings``: cubes that
    are views of one cube (``_lockstep``): once one is solved, the others in its lockstep group stop
    unsolved, with the states they generated."""
    fn = _beam_fn(rank, value_fn, policy_fn)
    puzzle = get_puzzle(puzzle)
    cubes = np.asarray(cubes, dtype=np.int8).reshape(-1, puzzle.num_stickers)
    last, count = start_history(len(cubes), last, count)
    chunk = max(1, min(chunk, LOCKSTEP_STATES // (puzzle.num_actions * beam_width)))
    if siblings is not None and len(siblings):  # whole cubes to a group: a cube's views stop each other only within one
        views = int(np.unique(siblings, return_counts=True)[1].max())
        chunk = max(views, chunk - chunk % views)

    def start(i: int, clock: Clock) -> Search:
        return _beam_search(
            cubes[i],
            int(last[i]),
            int(count[i]),
            beam_width,
            max_depth,
            max_nodes,
            rank,
            seconds,
            clock,
            puzzle,
            by_position,
            ends,
        )

    return _lockstep(start, len(cubes), fn, chunk, siblings)


def beam_widening(
    cube: np.ndarray,
    value_fn: ValueFn | None = None,
    policy_fn: PolicyFn | None = None,
    last: int = NO_ACTION,
    count: int = 0,
    beam_width: int = 100,
    max_depth: int = MAX_MOVES,
    max_nodes: int = 200_000,
    rank: str = "value",
    seconds: float = 60.0,
    puzzle: Puzzle | str | None = None,
    by_position: bool = False,
    max_width: int = 10_000_000,
    ends: EndTable | None = None,
) -> SolveResult:
    """The widest beam ``seconds`` allow, from one cube: ``beam`` at ``beam_width``, then twice that,
    four times, ... (at most ``max_width``), each round given the time left, until the time is
    spent; the shortest solution found (the earliest of equal length).

    A round after a solution of ``L`` moves searches only as deep as could find a shorter one
    (``depth_to_beat``: ``L - 1``, less the end table's radius), and its node budget grows with its
    width (``max_nodes`` is the first round's). So a cube is answered whenever some width solves it
    within the time, and one that takes the whole limit has been searched as wide as the limit
    allowed. The limit is read once per depth, so the last round can run past it by one depth's
    work; once a cube is solved, a round that would not finish in time (twice the last round's time)
    is not started. ``nodes`` and ``seconds`` add up the rounds. One cube at a time (not in
    lockstep): each cube's own wall time is its budget, and a beam of hundreds of states fills the
    network's batch alone.
    """
    if seconds is None:
        raise ValueError("a widening beam needs a time limit (seconds)")
    best, width, depth, took = SolveResult([], False, 0, 0.0), beam_width, max_depth, 0.0
    # Once solved, a round that would not finish in the time left (twice the last one's time:
    # twice the width) is not started: cut short, it would narrow towards greedy, which rarely beats it.
    while width <= max_width and depth > 0 and seconds - best.seconds > (2 * took if best.solved else 0.0):
        nodes, left = max_nodes * (width // beam_width), seconds - best.seconds
        got = beam(cube, value_fn, policy_fn, last, count, width, depth, nodes, rank, left, puzzle, by_position, ends)
        best, took = shorter(best, got), got.seconds
        depth = depth_to_beat(len(best.moves), ends.radius if ends else 0) if best.solved else depth
        width *= 2
    return best


def shorter(best: SolveResult, new: SolveResult) -> SolveResult:
    """The shorter solution of two rounds on one cube (the earlier on a tie), with both rounds'
    nodes and seconds."""
    keep = new if new.solved and (not best.solved or len(new.moves) < len(best.moves)) else best
    return SolveResult(keep.moves, keep.solved, best.nodes + new.nodes, best.seconds + new.seconds)


def depth_to_beat(length: int, radius: int = 0) -> int:
    """The depths a beam needs to search, at most, to find a solution shorter than ``length`` moves: with an end
    table of ``radius`` (``End_Table``) a beam that finishes at depth ``k`` does so in exactly ``k + radius`` moves
    (its root within the radius: in the fewest there are, which nothing beats). 0 or less: no beam can beat it."""
    return length - 1 - radius


def _beam_fn(rank: str, value_fn, policy_fn):
    """The one function a beam of ``rank`` calls: the value, the logits, or (mixed) both as
    ``(n, 1 + A)`` rows ``[value, logits]`` (the policy's ``with_value``, one forward pass)."""
    if rank not in BEAM_RANKS:
        raise ValueError(f"rank must be one of {BEAM_RANKS}, got {rank!r}")
    if rank == "mixed":
        both = getattr(policy_fn, "with_value", None)
        if both is None and value_fn is not None and policy_fn is not None:
            both = lambda cubes: np.column_stack([value_fn(cubes), policy_fn(cubes)])  # noqa: E731
        if both is None:
            raise ValueError("beam with rank='mixed' needs a value_fn and a policy_fn")
        return both
    fn = value_fn if rank == "value" else policy_fn
    if fn is None:
        raise ValueError(f"beam with rank={rank!r} needs a {'value_fn' if rank == 'value' else 'policy_fn'}")
    return fn


# Long by design: one cube's beam as one generator (expand, rank, prune, out-of-time planning, the end
# table's exact finish), whose local state the lockstep driver suspends at each network call.
def _beam_search(
    cube,
    last,
    count,
    beam_width,
    max_depth,
    max_nodes,
    rank,
    seconds,
    clock: Clock,
    puzzle: Puzzle | None = None,
    by_position: bool = False,
    ends: EndTable | None = None,
) -> Search:
    """The beam search of one cube (see ``beam``), as a ``Search``: it requests the values of
    each depth's new children (policy rank: the logits of the beam)."""
    puzzle = get_puzzle(puzzle)
    keys_of = functools.partial(beam_keys, puzzle, by_position)
    root = np.asarray(cube, dtype=np.int8).reshape(1, puzzle.num_stickers)
    if puzzle.is_solved(root)[0]:
        return SolveResult([], True, 0, 0.0)
    if ends is not None and (near := ends.nearest(root)) is not None:
        return SolveResult(near[1], verify(root, near[1], puzzle), 0, 0.0)
    states, (lasts, counts) = root, start_history(1, last, count)
    paths = np.zeros((1, 0), np.intp)  # [k, depth] moves from the root to each beam state
    cum = np.zeros(1)  # [k] cumulative log-probability (policy and mixed rank)
    nodes = 0  # children generated; a StopSearch thrown at any request ends the search with them
    try:
        # mixed rank: the beam's logits, read with its values when it was proposed (the root's here)
        read = np.asarray((yield root)) if rank == "mixed" else None
        logits = None if read is None else read[:, 1:]
        lead = None if read is None else float(read[0, 0])  # the beam's best value (value and mixed rank)
        expanded = keys_of(root)  # sorted keys of every state a beam has held
        depth_began, width = clock(), beam_width
        for _ in range(max_depth):
            # A depth costs about what the last one did (once the beam is full, exactly the same work, in
            # proportion to the beam). One that would end past the time limit is run on the best states
            # that share the time left with the depths the beam's best value says are still to go (at least
            # NARROW_DEPTHS): a search out of time narrows (towards greedy) instead of giving up, and the
            # limit holds to within a depth's jitter.
            now = clock()
            if seconds is not None and 2 * now - depth_began > seconds:
                # no value read (policy rank): NARROW_DEPTHS, the least the helper plans for
                to_go = (
                    0.0 if lead is None else value_as_moves(lead, puzzle.value_per_move) - (ends.radius if ends else 0)
                )
                width = _width_that_fits(len(states), now - depth_began, seconds - now, to_go)
                if width < 1:
                    break
                states, paths, cum, lasts, counts = (a[:width] for a in (states, paths, cum, lasts, counts))
                logits = None if logits is None else logits[:width]
            legal = puzzle.legal_action_mask(lasts, counts)  # [k, 12]
            if nodes + int(legal.sum()) > max_nodes:
                break
            depth_began = now
            parent, action = np.nonzero(legal)  # beam order, then action order
            children = puzzle.apply(states[parent], action)
            nodes += len(children)
            keys = keys_of(children)
            if ends is not None:
                # ``ends`` keys positions: by_position's keys are those, and so are the 3x3's (no whole-cube turns)
                near = ends.nearest(children, keys if by_position or puzzle.orient is None else None)
                if near is not None:
                    moves = paths[parent[near[0]]].tolist() + [int(action[near[0]])] + near[1]
                    return SolveResult(moves, verify(root, moves, puzzle), nodes, 0.0)
            else:
                solved = np.flatnonzero(puzzle.is_solved(children))
                if len(solved):
                    moves = paths[parent[solved[0]]].tolist() + [int(action[solved[0]])]
                    return SolveResult(moves, verify(root, moves, puzzle), nodes, 0.0)
            if rank == "value":
                # A position's value does not depend on the path, so its first copy (beam order,
                # then action) stands for all, and only those are evaluated.
                _, first = np.unique(keys, return_index=True)
                order = np.sort(first)
                order = order[~_sorted_contains(expanded, keys[order])]
                score = np.full(len(children), -np.inf)
                if len(order):
                    score[order] = np.asarray((yield children[order]), dtype=np.float64)
                order = order[np.argsort(-score[order], kind="stable")]
                lead = float(score[order[0]]) if len(order) else lead
            else:
                score = cum[parent] + log_softmax(logits if rank == "mixed" else (yield states))[parent, action]
                order = np.argsort(-score, kind="stable")
                _, first = np.unique(keys[order], return_index=True)
                order = order[np.sort(first)]  # best copy of each state, best first
                order = order[~_sorted_contains(expanded, keys[order])]
                if rank == "mixed" and len(order):
                    # The policy proposes MIXED_PROPOSALS children per place, the value picks among
                    # them; the proposals' logits come with their values, for the next depth.
                    order = order[: MIXED_PROPOSALS * width]
                    read = np.asarray((yield children[order]), dtype=np.float64)
                    pick = np.argsort(-read[:, 0], kind="stable")[:width]
                    order, logits, lead = order[pick], read[pick, 1:], float(read[pick[0], 0])
            # A state some earlier beam held is dropped: its children were generated then, nearer
            # the root, so keeping it again only spends the beam on a cycle.
            keep = order[:width]
            if not len(keep):
                break
            expanded = _sorted_insert(expanded, keys[keep])
            states, paths, cum = children[keep], np.column_stack([paths[parent[keep]], action[keep]]), score[keep]
            counts = puzzle.next_face_count(lasts[parent[keep]], counts[parent[keep]], action[keep])
            lasts = action[keep]
    except StopSearch:  # another view of the cube has solved it (``_lockstep``'s siblings)
        pass
    return SolveResult([], False, nodes, 0.0)


def _width_that_fits(beam_size: int, last_depth: float, left: float, to_go: float) -> int:
    """The beam states (best first) whose next depth takes its share of the ``left`` seconds, at
    ``last_depth`` seconds for ``beam_size`` states: ``1 / (g + 1)`` of it, ``g`` the depths expected
    after it (``to_go``, at least ``NARROW_DEPTHS``). So a beam that reads its distance right keeps one
    width nearly to the end, and one that reads it too short (a wide beam's best value is optimistic)
    still keeps three quarters of the time for the depths after each: its widths fall geometrically,
    towards greedy, over many depths. Where not one state's share fits, one state whose depth takes at
    most half the time left (a greedy try); 0 when not even that fits."""
    if left <= 0 or last_depth <= 0:
        return 0 if left <= 0 else beam_size
    fit = int(min(beam_size, beam_size * left / ((max(to_go, NARROW_DEPTHS) + 1) * last_depth)))
    return fit or min(1, int(beam_size * left / (2 * last_depth)))


def _sorted_insert(sorted_keys: np.ndarray, new: np.ndarray) -> np.ndarray:
    """``sorted_keys`` with the distinct ``new`` keys (none of them in it) merged in, sorted:
    one pass over the old keys instead of re-sorting them all (``np.union1d``) each depth."""
    new = np.sort(new)
    return np.insert(sorted_keys, np.searchsorted(sorted_keys, new), new)


def _sorted_contains(sorted_keys: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """``keys`` that occur in the sorted array ``sorted_keys`` (a vectorised set lookup)."""
    at = np.minimum(np.searchsorted(sorted_keys, keys), len(sorted_keys) - 1)
    return sorted_keys[at] == keys


# --------------------------------------------------------------------------- weighted A*
class _Graph:
    """Nodes of one search as growable arrays; ``index`` maps a state key to its node."""

    def __init__(self, num_stickers: int, capacity: int = 1024):
        self.size = 0
        self.state = np.zeros((capacity, num_stickers), np.int8)  # [cap, stickers]
        self.g = np.zeros(capacity, np.int64)  # [cap] best path cost found
        self.h = np.zeros(capacity)  # [cap] heuristic (moves)
        self.parent = np.full(capacity, -1, np.int64)  # [cap] node on the best path, -1 at the root
        self.action = np.full(capacity, NO_ACTION, np.intp)  # [cap] move from the parent
        self.count = np.zeros(capacity, np.intp)  # [cap] face count of that move
        self.closed_g = np.full(capacity, np.iinfo(np.int64).max)  # [cap] g when last expanded
        self.index: dict = {}  # key (an int, or a tuple of ints for a multi-part key) -> node

    def add(self, keys, state, g, h, parent, action, count) -> np.ndarray:
        ids = np.arange(self.size, self.size + len(keys))
        if self.size + len(keys) > len(self.g):  # double: amortised O(1) per node
            cap = max(2 * len(self.g), self.size + len(keys))
            for name in ("state", "g", "h", "parent", "action", "count", "closed_g"):
                old = getattr(self, name)
                new = np.resize(old, (cap,) + old.shape[1:])
                new[len(old) :] = np.iinfo(np.int64).max if name == "closed_g" else 0
                setattr(self, name, new)
        self.state[ids], self.g[ids], self.h[ids] = state, g, h
        self.parent[ids], self.action[ids], self.count[ids] = parent, action, count
        self.index.update(zip(keys.tolist(), ids.tolist()))
        self.size += len(keys)
        return ids

    def path(self, node: int) -> list[int]:
        moves = []
        while self.parent[node] >= 0:
            moves.append(int(self.action[node]))
            node = int(self.parent[node])
        return moves[::-1]


def astar(
    cube: np.ndarray,
    value_fn: ValueFn,
    last: int = NO_ACTION,
    count: int = 0,
    lam: float = 0.6,
    batch: int = 1,
    max_nodes: int = 200_000,
    seconds: float | None = None,
    puzzle: Puzzle | str | None = None,
) -> SolveResult:
    """DeepCubeA's batch weighted A* from one cube: ``f = lam * g + h``, ``h = value_as_moves`` (at least 0).

    Each step pops the ``batch`` open nodes of lowest ``f`` and expands them together (one
    ``value_fn`` call for all their new children). States are keyed exactly; a state reached
    again by a shorter path gets the new parent and is reopened. Solved children are goals,
    never expanded; the search stops when no open node has ``f`` below the best goal's
    ``lam * g`` (with ``batch = 1`` that is "stop when a goal is popped"; with larger batches it
    keeps ``lam = 1`` with an exact, consistent heuristic optimal). A goal found before the
    budget runs out is returned even if the proof of optimality was cut short.

    Defaults: ``lam = 0.6`` is DeepCubeA's (a weight below 1 trusts the network's estimate over
    the path length: faster, slightly longer solutions); ``batch = 1`` because the lockstep
    driver fills the network's batches with many cubes (DeepCubeA's batch of 10,000 nodes fills
    a GPU from one cube). Budgets:
    ``max_nodes`` children generated (never exceeded), ``seconds``.
    ``astar_lockstep`` runs the same search for many cubes in lockstep.
    """
    puzzle = get_puzzle(puzzle)
    return _run_one(
        lambda clock: _astar_search(cube, last, count, lam, batch, max_nodes, seconds, clock, puzzle), value_fn
    )


def astar_lockstep(
    cubes: np.ndarray,
    value_fn: ValueFn,
    last=None,
    count=None,
    lam: float = 0.6,
    batch: int = 1,
    max_nodes: int = 200_000,
    seconds: float | None = None,
    chunk: int = LOCKSTEP_CHUNK,
    puzzle: Puzzle | str | None = None,
) -> list[SolveResult]:
    """``astar`` from every cube, in lockstep groups: each step, every unfinished cube pops
    its ``batch`` best open nodes and all their new children go through one ``value_fn``
    call; each cube keeps its own graph, heap and budgets. Same moves, ``solved`` and
    ``nodes`` per cube as ``astar`` (``seconds``: see ``_lockstep``). A group holds at most
    ``chunk`` cubes and ``LOCKSTEP_NODES`` nodes of budget (the graphs live together)."""
    puzzle = get_puzzle(puzzle)
    cubes = np.asarray(cubes, dtype=np.int8).reshape(-1, puzzle.num_stickers)
    last, count = start_history(len(cubes), last, count)
    chunk = max(1, min(chunk, LOCKSTEP_NODES // max(max_nodes, 1)))

    def start(i: int, clock: Clock) -> Search:
        return _astar_search(cubes[i], int(last[i]), int(count[i]), lam, batch, max_nodes, seconds, clock, puzzle)

    return _lockstep(start, len(cubes), value_fn, chunk)


def _astar_search(
    cube, last, count, lam, batch, max_nodes, seconds, clock: Clock, puzzle: Puzzle | None = None
) -> Search:
    """The weighted A* of one cube (see ``astar``), as a ``Search``: it requests the values of
    each step's new unsolved children."""
    puzzle = get_puzzle(puzzle)
    root = np.asarray(cube, dtype=np.int8).reshape(1, puzzle.num_stickers)
    if puzzle.is_solved(root)[0]:
        return SolveResult([], True, 0, 0.0)
    last, count = start_history(1, last, count)
    graph = _Graph(puzzle.num_stickers)  # a node's ``action`` is the move into it; the root's: its history
    graph.add(puzzle.state_keys(root), root, 0, 0.0, -1, last, count)
    tiebreak = itertools.count()
    # (f, -g, order, node, g): equal f pops the deeper node first (the usual A* tie-break: with an
    # exact heuristic every node on a shortest path has the same f, and this walks one of them
    # straight to the goal instead of expanding them all), then the first pushed.
    open_heap = [(0.0, 0, next(tiebreak), 0, 0)]
    goal, goal_g, nodes = -1, np.inf, 0
    while open_heap and (goal < 0 or open_heap[0][0] < round(lam * goal_g, F_DECIMALS)):
        if seconds is not None and clock() > seconds:
            break
        room = min(batch, (max_nodes - nodes) // puzzle.num_actions)  # so the budget is never exceeded
        popped = []
        while open_heap and len(popped) < room:
            _, _, _, node, g = heapq.heappop(open_heap)
            if g == graph.g[node] and g < graph.closed_g[node]:  # skip stale and expanded entries
                graph.closed_g[node] = g
                popped.append(node)
            if goal >= 0 and open_heap and open_heap[0][0] >= round(lam * goal_g, F_DECIMALS):
                break
        if not popped:
            break
        nodes, goal, goal_g = yield from _expand(
            graph, np.array(popped), lam, open_heap, tiebreak, nodes, goal, goal_g, puzzle
        )
    if goal < 0:
        return SolveResult([], False, nodes, 0.0)
    moves = graph.path(goal)
    return SolveResult(moves, verify(root, moves, puzzle), nodes, 0.0)


def _expand(graph: _Graph, parents, lam, open_heap, tiebreak, nodes, goal, goal_g, puzzle: Puzzle):
    """Generate the legal children of ``parents``, add or improve their nodes, push them (a
    generator: it requests the values of the new unsolved children, if any)."""
    legal = puzzle.legal_action_mask(graph.action[parents], graph.count[parents])
    row, action = np.nonzero(legal)
    parent = parents[row]
    state = puzzle.apply(graph.state[parent], action)
    g = graph.g[parent] + 1
    nodes += len(state)
    keys = puzzle.state_keys(state)
    # One copy per state, the shortest path first (then the earliest parent and action).
    order = np.lexsort((np.arange(len(keys)), g, keys))
    first = order[np.unique(keys[order], return_index=True)[1]]
    first.sort()
    keys, state, g, parent, action = keys[first], state[first], g[first], parent[first], action[first]
    count = puzzle.next_face_count(graph.action[parent], graph.count[parent], action)
    known = np.fromiter((graph.index.get(k, -1) for k in keys.tolist()), dtype=np.int64, count=len(keys))
    better = np.flatnonzero(known >= 0)
    better = better[g[better] < graph.g[known[better]]]
    ids = known[better]
    graph.g[ids], graph.parent[ids], graph.action[ids], graph.count[ids] = (
        g[better],
        parent[better],
        action[better],
        count[better],
    )
    new = np.flatnonzero(known < 0)
    solved = puzzle.is_solved(state[new])
    h = np.zeros(len(new))
    if (~solved).any():
        h[~solved] = value_as_moves((yield state[new[~solved]]), puzzle.value_per_move, at_least=0.0)
    new_ids = graph.add(keys[new], state[new], g[new], h, parent[new], action[new], count[new])
    touched = np.concatenate([ids, new_ids])
    is_goal = puzzle.is_solved(graph.state[touched])
    for node in touched[is_goal].tolist():
        if graph.g[node] < goal_g:
            goal, goal_g = node, graph.g[node]
    # f is rounded so that float noise in h (1 - v is not exact in binary) cannot split ties
    # between equally good paths, which the tie-break and the stopping test rely on.
    f = np.round(lam * graph.g[touched] + graph.h[touched], F_DECIMALS)
    for node, f_node, g_node in zip(
        touched[~is_goal].tolist(), f[~is_goal].tolist(), graph.g[touched[~is_goal]].tolist()
    ):
        heapq.heappush(open_heap, (f_node, -g_node, next(tiebreak), node, g_node))
    return nodes, goal, goal_g


# --------------------------------------------------------------------------- seed 003's best-first search
#: The seed's action order ``L L' R R' F F' B B' U U' D D'`` as this project's action indices:
#: children are generated (and ties broken) in the seed's order.
SEED_ACTION_ORDER = np.array([6, 7, 2, 3, 4, 5, 8, 9, 0, 1, 10, 11], dtype=np.intp)
SEED_STEP_PENALTY = 4  # the seed's heuristic subtracts 4 per move taken


@functools.cache
def _face_pairs(size: int) -> np.ndarray:
    return face_adjacent_pairs(size)


def seed_heuristic(cubes: np.ndarray, steps, puzzle: Puzzle | str | None = None) -> np.ndarray:
    """Seed 003's score (higher is better): pairs of edge-adjacent same-colour stickers on
    each face (24 when a 2x2 is solved, 72 for a 3x3, the seed's cube) minus ``4 * steps`` taken."""
    puzzle = get_puzzle(puzzle)
    pairs = _face_pairs(puzzle.size)
    cubes = np.asarray(cubes).reshape(-1, puzzle.num_stickers)
    same = (cubes[:, pairs[:, 0]] == cubes[:, pairs[:, 1]]).sum(axis=1)
    return same - SEED_STEP_PENALTY * np.asarray(steps)


def bestfirst(
    cube: np.ndarray,
    last: int = NO_ACTION,
    count: int = 0,
    max_nodes: int = 200_000,
    seconds: float | None = None,
    puzzle: Puzzle | str | None = None,
) -> SolveResult:
    """Seed 003's ``solve`` (written for the 3x3; the 2x2 by default): greedy best-first search
    on ``seed_heuristic``.

    Faithful to the seed: the frontier (a ``SortedSet`` there) pops the node of highest score,
    and among equal scores the one inserted last (``SortedSet.pop()`` takes the rightmost, new
    equal elements go right of old ones); a node's children are made in the seed's action
    order and the search returns as soon as one of them is solved (before the explored check);
    a state already explored is never added again, even by a shorter path (no reopening).
    Beyond the seed: the env's mask is applied, which on a fresh cube never changes the moves
    found (the masked children are the grandparent or its other child, both already
    explored), only the node count; and budgets: ``max_nodes`` children generated (never
    exceeded), ``seconds``.
    """
    start = time.perf_counter()
    puzzle = get_puzzle(puzzle)
    root = np.asarray(cube, dtype=np.int8).reshape(puzzle.num_stickers)
    if puzzle.is_solved(root[None])[0]:
        return SolveResult([], True, 0, time.perf_counter() - start)
    (root_last,), (root_count,) = start_history(1, last, count)
    states, steps, parents, actions, lasts, counts = [root], [0], [-1], [NO_ACTION], [root_last], [root_count]
    explored = set(puzzle.state_keys(root).tolist())
    inserted = itertools.count()
    # min-heap: highest score, newest first
    frontier = [(-int(seed_heuristic(root, 0, puzzle)[0]), -next(inserted), 0)]
    nodes = 0
    while frontier:
        node = heapq.heappop(frontier)[2]
        legal = puzzle.legal_action_mask(lasts[node], counts[node])[SEED_ACTION_ORDER]
        acts = SEED_ACTION_ORDER[legal]
        if nodes + len(acts) > max_nodes or (seconds is not None and time.perf_counter() - start > seconds):
            break
        children = states[node][puzzle.move_perms[acts]]  # [k, stickers]
        nodes += len(acts)
        solved = np.flatnonzero(puzzle.is_solved(children))
        if len(solved):
            moves = _backtrack(parents, actions, node) + [int(acts[solved[0]])]
            return SolveResult(moves, verify(root, moves, puzzle), nodes, time.perf_counter() - start)
        scores = seed_heuristic(children, steps[node] + 1, puzzle).tolist()
        for child, key, a, score in zip(children, puzzle.state_keys(children).tolist(), acts.tolist(), scores):
            if key in explored:
                continue
            explored.add(key)
            states.append(child)
            steps.append(steps[node] + 1)
            parents.append(node)
            actions.append(a)
            counts.append(int(puzzle.next_face_count(lasts[node], counts[node], a)))
            lasts.append(a)
            heapq.heappush(frontier, (-score, -next(inserted), len(states) - 1))
    return SolveResult([], False, nodes, time.perf_counter() - start)


def _backtrack(parents: list[int], actions: list[int], node: int) -> list[int]:
    moves = []
    while parents[node] >= 0:
        moves.append(actions[node])
        node = parents[node]
    return moves[::-1]
