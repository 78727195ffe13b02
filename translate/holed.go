package translate

// holed is a list kept in the order its items were pushed, from which an
// item is dropped by its index in O(1) amortised: a drop leaves a hole
// (nil), and the holes are closed only once they outnumber the items
// left, which moves each item at most once per halving. Dropping the open
// tool calls one by one is then linear in their number, where deleting
// each from a slice was quadratic.
type holed[T any] struct {
	s    []*T
	live int
}

// push appends v and returns its index.
func (h *holed[T]) push(v *T) int {
	h.s = append(h.s, v)
	h.live++
	return len(h.s) - 1
}

// drop removes the item at index i, leaving a hole; the other items keep
// their indexes until tidy.
func (h *holed[T]) drop(i int) {
	h.s[i] = nil
	h.live--
}

// tidy closes the holes once they outnumber the items left. It reports
// whether it did, which moves the items left: their indexes are then their
// positions in items().
func (h *holed[T]) tidy() (moved bool) {
	switch {
	case h.live == 0:
		clear(h.s)
		h.s = h.s[:0]
		return false
	case len(h.s)-h.live <= h.live || len(h.s) < 32:
		return false
	}
	k := 0
	for _, v := range h.s {
		if v != nil {
			h.s[k] = v
			k++
		}
	}
	clear(h.s[k:])
	h.s = h.s[:k]
	return true
}

// items returns the items left, in order, with holes; callers skip nil.
func (h *holed[T]) items() []*T { return h.s }

// len returns the number of items left.
func (h *holed[T]) len() int { return h.live }

// left returns the items left, in order and without holes, in a slice of
// their own (nil when there are none).
func (h *holed[T]) left() []*T {
	if h.live == 0 {
		return nil
	}
	out := make([]*T, 0, h.live)
	for _, v := range h.s {
		if v != nil {
			out = append(out, v)
		}
	}
	return out
}

// take returns the items left (left) and empties the list.
func (h *holed[T]) take() []*T {
	out := h.left()
	h.reset()
	return out
}

// reset empties the list, keeping its array.
func (h *holed[T]) reset() {
	clear(h.s)
	h.s, h.live = h.s[:0], 0
}
