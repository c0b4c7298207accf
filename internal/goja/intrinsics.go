package goja

// wasmeval: the realm's own built-ins, whatever a script has assigned to
// their globals since (FORK.md, item 8).

// Intrinsic returns the built-in that this runtime made under name (the
// error constructors Error, AggregateError, EvalError, RangeError,
// ReferenceError, SyntaxError, TypeError and URIError, and JSON and
// RegExp), not the global binding of that name, which a script may have
// replaced, deleted or made a Proxy of; nil for any other name. Go code
// that makes errors or calls built-ins on a script's behalf uses it, so
// that a script cannot change what the host makes, or make it panic.
func (r *Runtime) Intrinsic(name string) *Object {
	switch name {
	case "Error":
		return r.getError()
	case "AggregateError":
		return r.getAggregateError()
	case "EvalError":
		return r.getEvalError()
	case "RangeError":
		return r.getRangeError()
	case "ReferenceError":
		return r.getReferenceError()
	case "SyntaxError":
		return r.getSyntaxError()
	case "TypeError":
		return r.getTypeError()
	case "URIError":
		return r.getURIError()
	case "JSON":
		return r.getJSON()
	case "RegExp":
		return r.getRegExp()
	}
	return nil
}

// NewError returns a new error made by the realm's own constructor named
// ctorName (one of Intrinsic's error constructors; Error for any other
// name), with message msg, as `new ctorName(msg)` would make it before any
// script ran: it runs no script code.
func (r *Runtime) NewError(ctorName, msg string) *Object {
	ctor := r.Intrinsic(ctorName)
	if ctor == nil || ctorName == "JSON" || ctorName == "RegExp" || ctorName == "AggregateError" {
		ctor = r.getError()
	}
	return r.newError(ctor, msg).(*Object)
}
