// Package aside runs deep work off the goroutine that will wait on a
// stream.
//
// A goroutine's stack grows to the deepest call it made and is only halved
// again, at a collection, when less than a quarter of it is in use. The
// goroutine net/http serves a connection with runs every request of the
// connection, and, for a streaming answer, waits on the upstream for as
// long as the stream is open, a few kilobytes down (the server, the
// middleware, the turn, the body read). Decoding a request, a store's
// transaction, an upstream call or the first write of a response's
// headers go several kilobytes deeper: made on that goroutine, they would
// double its stack for the whole life of every open stream. Made aside,
// on a goroutine that ends when they do, they leave it at the smallest
// size a stream needs, as a plain relay's.
package aside

// Do runs f on a goroutine of its own, waits for it and returns its error,
// as if f had run on the caller's; a panic of f's is raised again on the
// caller's goroutine, where the server's recovery sees it. f may use what
// the caller holds (the caller waits, and does nothing meanwhile).
func Do(f func() error) error {
	var (
		err      error
		panicked any
		done     = make(chan struct{})
	)
	go func() {
		defer close(done)
		defer func() { panicked = recover() }()
		err = f()
	}()
	<-done
	if panicked != nil {
		panic(panicked)
	}
	return err
}
