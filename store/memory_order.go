package store

import (
	"slices"
	"sort"
	"strings"
	"time"
)

// The memory store's listings in order, kept by owner as sessions and
// threads change: a page is a search and a slice of the owner's own, and
// a count is a length, however many the owner (and the others) hold. A
// scan of every session or thread for each page made walking an owner's
// pages cost the square of what it holds.

// ownerSessions are each owner's sessions in the order they were made
// (their seq, which only grows).
type ownerSessions map[string][]*memSession

func (o ownerSessions) add(ms *memSession) {
	o[ms.s.Owner] = append(o[ms.s.Owner], ms)
}

func (o ownerSessions) remove(ms *memSession) {
	list := o[ms.s.Owner]
	i := sort.Search(len(list), func(i int) bool { return list[i].s.Seq >= ms.s.Seq })
	if i < len(list) && list[i] == ms {
		list = slices.Delete(list, i, i+1)
	}
	if len(list) == 0 {
		delete(o, ms.s.Owner)
		return
	}
	o[ms.s.Owner] = list
}

// page is owner's first limit sessions after seq after.
func (o ownerSessions) page(owner string, after int64, limit int) []*memSession {
	list := o[owner]
	i := sort.Search(len(list), func(i int) bool { return list[i].s.Seq > after })
	return list[i:min(len(list), i+limit)]
}

// threadRef is a thread as a listing orders it.
type threadRef struct {
	updated time.Time
	id      string
}

// compare orders refs as a listing does, oldest first (a listing reads
// from the end).
func (r threadRef) compare(s threadRef) int {
	if c := r.updated.Compare(s.updated); c != 0 {
		return c
	}
	return strings.Compare(r.id, s.id)
}

// threadOrder is each owner's threads by last activity, oldest first.
type threadOrder map[string][]threadRef

// find is where r is, or would go, in owner's threads.
func (o threadOrder) find(owner string, r threadRef) (int, bool) {
	return slices.BinarySearchFunc(o[owner], r, threadRef.compare)
}

// move puts a thread of owner last active at was (zero: new) at now.
func (o threadOrder) move(owner, id string, was, now time.Time) {
	if !was.IsZero() {
		o.remove(owner, threadRef{was, id})
	}
	r := threadRef{now, id}
	i, _ := o.find(owner, r)
	o[owner] = slices.Insert(o[owner], i, r)
}

func (o threadOrder) remove(owner string, r threadRef) {
	if i, ok := o.find(owner, r); ok {
		o[owner] = slices.Delete(o[owner], i, i+1)
	}
	if len(o[owner]) == 0 {
		delete(o, owner)
	}
}

// page is owner's first limit threads after the page's start, newest
// first.
func (o threadOrder) page(owner string, after ThreadPage, limit int) []threadRef {
	list := o[owner]
	end := len(list)
	if !after.UpdatedAt.IsZero() || after.ID != "" {
		end, _ = o.find(owner, threadRef{after.UpdatedAt, after.ID})
	}
	out := make([]threadRef, 0, min(limit, end))
	for i := end - 1; i >= 0 && len(out) < limit; i-- {
		out = append(out, list[i])
	}
	return out
}
