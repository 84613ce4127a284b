package eval

import "math"

// z95 is the standard normal quantile of a two-sided 95% interval.
const z95 = 1.959963984540054

// Wilson is the 95% Wilson score interval of k successes in n trials: unlike
// k/n ± z·se, it stays within [0, 1] and is not empty at 0 or n. (0, 1)
// when n is 0.
func Wilson(k, n int) (lo, hi float64) {
	if n <= 0 {
		return 0, 1
	}
	p, nf, z2 := float64(k)/float64(n), float64(n), z95*z95
	denom := 1 + z2/nf
	center := (p + z2/(2*nf)) / denom
	half := z95 * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf)) / denom
	return max(0, center-half), min(1, center+half)
}

// McNemar is the two-sided p-value of McNemar's exact test on b and c
// discordant pairs (right only with A, right only with B): under the null
// hypothesis each discordant pair goes either way with probability 1/2, so
// p is twice the binomial tail of the rarer side, at most 1.
func McNemar(b, c int) float64 {
	n, k := b+c, min(b, c)
	if n == 0 {
		return 1
	}
	// Summed in log space: 2^-n underflows beyond a thousand pairs.
	lnHalf := float64(n) * math.Log(0.5)
	lgN, _ := math.Lgamma(float64(n + 1))
	tail := 0.0
	for i := 0; i <= k; i++ {
		lgI, _ := math.Lgamma(float64(i + 1))
		lgRest, _ := math.Lgamma(float64(n - i + 1))
		tail += math.Exp(lgN - lgI - lgRest + lnHalf)
	}
	return min(1, 2*tail)
}
