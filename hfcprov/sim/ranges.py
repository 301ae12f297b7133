"""Ordered, disjoint segment ranges: the sender's SACK scoreboard and the receiver's out-of-order store.

``[start, end)`` segment ranges kept in two sorted lists (starts, ends) from index
``lo`` on; touching ranges are merged. Searches bisect (O(log n)); appending at the
top, trimming at the bottom (a cumulative ACK, an in-order arrival) and merging a
few ranges near either end are O(1) amortised: a merge shifts whichever side of the
lists is shorter, and the dead prefix below ``lo`` is cut off only once it is
longer than the live part. So the per-ACK work of TCP does not grow with the
window, even after a slow-start overshoot leaves a hole every other segment.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right


class SegmentRanges:
    __slots__ = ("count", "ends", "lo", "starts")

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []
        self.lo = 0  # first live index
        self.count = 0  # segments held

    def __len__(self) -> int:
        return len(self.starts) - self.lo

    def __bool__(self) -> bool:
        return len(self.starts) > self.lo

    def __iter__(self):
        return iter(zip(self.starts[self.lo:], self.ends[self.lo:]))

    def first(self):
        """The lowest range ``(start, end)``, or None."""
        lo = self.lo
        return (self.starts[lo], self.ends[lo]) if len(self.starts) > lo else None

    def top(self) -> int:
        """One past the highest segment held (0 when empty)."""
        return self.ends[-1] if len(self.starts) > self.lo else 0

    def __contains__(self, x: int) -> bool:
        i = bisect_right(self.starts, x, self.lo) - 1
        return i >= self.lo and self.ends[i] > x

    def index(self, x: int) -> int:
        """Index (from 0 = lowest) of the range holding ``x``; ``x`` must be held."""
        return bisect_right(self.starts, x, self.lo) - 1 - self.lo

    def at(self, k: int):
        i = self.lo + k
        return self.starts[i], self.ends[i]

    def add(self, s: int, e: int) -> list:
        """Hold ``[s, e)``; returns the sub-ranges that were not held before (empty: nothing new)."""
        st, en, lo = self.starts, self.ends, self.lo
        n = len(st)
        if n == lo or s > en[-1]:  # above everything: the common case
            st.append(s)
            en.append(e)
            self.count += e - s
            return [(s, e)]
        if s >= st[-1]:  # the top range grows (or already holds it): the next most common case
            top = en[-1]
            if e <= top:
                return []
            en[-1] = e
            self.count += e - top
            return [(top, e)]
        i = bisect_left(en, s, lo)  # first range ending at or after s (touches, overlaps or lies above)
        if i < n and st[i] <= s and en[i] >= e:
            return []  # held already (a SACK block repeated)
        j = bisect_right(st, e, lo)  # ranges below j start at or before e
        if i == j:
            self._insert(i, s, e)
            self.count += e - s
            return [(s, e)]
        gaps = []
        x = s
        for k in range(i, j):
            if st[k] > x:
                gaps.append((x, st[k]))
            x = max(x, en[k])
        if x < e:
            gaps.append((x, e))
        for a, b in gaps:
            self.count += b - a
        self._replace(i, j, min(s, st[i]), max(e, en[j - 1]))
        return gaps

    def add_above(self, s: int, e: int) -> int:
        """``add(s, e)`` when ``s`` lies at or above the top range's start (a SACK for the newest
        data): returns how many segments were new, the last ones of ``[s, e)``; -1 (and nothing
        held) when ``s`` lies lower."""
        st, en = self.starts, self.ends
        if len(st) == self.lo or s > en[-1]:
            st.append(s)
            en.append(e)
            self.count += e - s
            return e - s
        if s >= st[-1]:
            top = en[-1]
            if e <= top:
                return 0
            en[-1] = e
            self.count += e - top
            return e - top
        return -1

    def hold(self, s: int, e: int) -> int:
        """``add(s, e)``, returning the index (from 0 = lowest) of the range now holding ``s``: the
        receiver's out-of-order store, where new data almost always lands at or above the top."""
        if self.add_above(s, e) < 0:
            self.add(s, e)
            return bisect_right(self.starts, s, self.lo) - 1 - self.lo
        return len(self.starts) - 1 - self.lo  # the top range

    def _insert(self, i: int, s: int, e: int) -> None:
        st, en, lo = self.starts, self.ends, self.lo
        if i == len(st):
            st.append(s)
            en.append(e)
        elif lo > 0 and i - lo < len(st) - i:  # nearer the bottom: shift the bottom down into the dead prefix
            st[lo - 1:i - 1] = st[lo:i]
            en[lo - 1:i - 1] = en[lo:i]
            self.lo = lo - 1
            st[i - 1] = s
            en[i - 1] = e
        else:
            st.insert(i, s)
            en.insert(i, e)

    def _replace(self, i: int, j: int, s: int, e: int) -> None:
        """Ranges i..j-1 become the one range [s, e)."""
        st, en, lo = self.starts, self.ends, self.lo
        d = j - i - 1
        if d and i - lo < len(st) - j:  # fewer ranges below: move them up
            st[lo + d:i + d] = st[lo:i]
            en[lo + d:i + d] = en[lo:i]
            self.lo = lo + d
            i = j - 1
        elif d:
            del st[i + 1:j]
            del en[i + 1:j]
        st[i] = s
        en[i] = e

    def drop_below(self, x: int) -> int:
        """Forget every segment below ``x``; returns how many were held."""
        st, en = self.starts, self.ends
        lo, n = self.lo, len(st)
        removed = 0
        while lo < n and en[lo] <= x:
            removed += en[lo] - st[lo]
            lo += 1
        if lo < n and st[lo] < x:
            removed += x - st[lo]
            st[lo] = x
        if lo == n:
            st.clear()
            en.clear()
            lo = 0
        elif lo > 32 and 2 * lo > n:
            del st[:lo]
            del en[:lo]
            lo = 0
        self.lo = lo
        self.count -= removed
        return removed

    def clear(self) -> None:
        self.starts.clear()
        self.ends.clear()
        self.lo = self.count = 0

    def kth_from_top(self, k: int):
        """The segment with exactly ``k`` held segments at or above it, or None if fewer are held."""
        st, en = self.starts, self.ends
        i = len(st) - 1
        while i >= self.lo:
            length = en[i] - st[i]
            if length >= k:
                return en[i] - k
            k -= length
            i -= 1
        return None

    def mark_from_top(self, k: int, floor: int):
        """``(kth_from_top(k), the sub-ranges of [floor, that mark) not held)``; ``(None, ())``
        if fewer than ``k`` are held. The SACK sender's IsLost step: the mark usually lies
        in one of the top ranges and ``floor`` (the last mark) just below it, so the holes
        come from the ranges the walk passed, without ``gaps``' search."""
        st, en = self.starts, self.ends
        lo = self.lo
        i = len(st) - 1
        while i >= lo:
            length = en[i] - st[i]
            if length >= k:
                break
            k -= length
            i -= 1
        else:
            return None, ()
        mark = en[i] - k
        s = st[i]
        if floor >= s:
            return mark, ()  # [floor, mark) lies inside range i
        if i == lo:
            return mark, ((floor, s),)
        if st[i - 1] <= floor:  # floor in range i - 1 or in the gap above it
            e = en[i - 1]
            return mark, ((floor if floor > e else e, s),)
        return mark, self.gaps(floor, mark)

    def gaps(self, a: int, b: int) -> list:
        """The sub-ranges of ``[a, b)`` not held."""
        st, en = self.starts, self.ends
        n = len(st)
        i = bisect_right(en, a, self.lo)  # first range ending above a
        out = []
        x = a
        while x < b:
            if i < n and st[i] <= x:
                x = en[i]
                i += 1
                continue
            stop = st[i] if i < n and st[i] < b else b
            out.append((x, stop))
            x = stop
        return out
