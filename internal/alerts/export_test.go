package alerts

// MatchSteps matches name against p as Match does, and counts the steps it
// took (see Pattern.match).
func MatchSteps(p *Pattern, name string) (matched bool, steps int64) {
	matched = p.match(name, &steps)
	return matched, steps
}
