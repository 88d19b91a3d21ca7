"""Multi-organization scheduling of rigid jobs on clusters (Pascual, Rzadca, Trystram) and the MOSP
game (Cohen, Cordeiro, Trystram); docs/mosp.md, docs/game.md."""
