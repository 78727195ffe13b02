package translate

// openTexts are the text (or reasoning) messages a run has open, in the
// order they were opened, found by id: an agent may hold thousands open
// at once, and then each delta and each end finds its message without a
// walk over the others, and closing them all is one pass.
type openTexts struct {
	list  []openText     // in the order opened; a message taken is a hole
	index map[string]int // id → place in list, once list is past a few
	live  int            // the messages open (list less its holes)
}

type openText struct {
	id   string
	text streamedText
	gone bool // taken: a hole in the list
}

// indexFrom is the length of list past which its messages are found by
// index rather than by a walk.
const indexFrom = 8

// find is the open message with the given id; nil if none.
func (o *openTexts) find(id string) *openText {
	if o.index != nil {
		if i, ok := o.index[id]; ok {
			return &o.list[i]
		}
		return nil
	}
	for i := range o.list {
		if !o.list[i].gone && o.list[i].id == id {
			return &o.list[i]
		}
	}
	return nil
}

// open is the open message with the given id, opened (last) if it is not.
func (o *openTexts) open(id string, spill TextSpill) *openText {
	if m := o.find(id); m != nil {
		return m
	}
	o.list = append(o.list, openText{id: id, text: streamedText{spill: spill}})
	o.live++
	if o.index != nil {
		o.index[id] = len(o.list) - 1
	} else if len(o.list) > indexFrom {
		o.reindex()
	}
	return &o.list[len(o.list)-1]
}

// take closes the message with the given id and returns its text (the
// list lets go of it).
func (o *openTexts) take(id string) (string, bool) {
	m := o.find(id)
	if m == nil {
		return "", false
	}
	s := m.text.String()
	*m = openText{gone: true}
	o.live--
	if o.index != nil {
		delete(o.index, id)
	}
	switch holes := len(o.list) - o.live; {
	case o.live == 0:
		clear(o.list)
		o.list, o.index = o.list[:0], nil
	case holes > indexFrom && holes > o.live:
		o.reindex()
	}
	return s, true
}

// reindex squeezes the holes out of the list and indexes it when it is
// past a few.
func (o *openTexts) reindex() {
	kept := o.list[:0]
	for _, m := range o.list {
		if !m.gone {
			kept = append(kept, m)
		}
	}
	clear(o.list[len(kept):])
	o.list, o.index = kept, nil
	if len(kept) > indexFrom {
		o.index = make(map[string]int, len(kept))
		for i, m := range kept {
			o.index[m.id] = i
		}
	}
}

// ids are the ids of the open messages, in the order they were opened.
func (o *openTexts) ids() []string {
	out := make([]string, 0, o.live)
	for _, m := range o.list {
		if !m.gone {
			out = append(out, m.id)
		}
	}
	return out
}

// each calls f with every open message, in the order they were opened.
func (o *openTexts) each(f func(m *openText)) {
	for i := range o.list {
		if !o.list[i].gone {
			f(&o.list[i])
		}
	}
}
