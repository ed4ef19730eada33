"""Les mots des clients en terminal, en français."""

from __future__ import annotations

WORDS: dict[str, str] = {
    "status.waiting": "en attente d'un adversaire",
    "status.countdown": "au départ",
    "status.running": "en course",
    "status.finished": "terminée",
    "status.closed": "fermée",
    "reason.cleared": "a tout dégagé le premier",
    "reason.count": "plus de cartes sur les fondations",
    "reason.reached_first": "même total, atteint le premier",
    "reason.abandoned": "l'adversaire a abandonné la course classée",
    "reason.draw": "égalité",
    "attempt.playing": "joue encore",
    "attempt.cleared": "a dégagé le jeu",
    "attempt.resigned": "a abandonné",
    "attempt.abandoned": "absent trop longtemps (abandon)",
    "attempt.stuck": "s'est déclaré bloqué",
    "attempt.dead": "plus aucun chemin vers une fondation",
    "attempt.blocked": "plus aucun coup légal",
    "attempt.time_limit": "temps écoulé",
    "attempt.race_over": "jouait encore à la fin",
    "closed.left": "le créateur est parti",
    "closed.abandoned": "le créateur s'est absenté",
    "closed.cancelled": "la demande de partie rapide a été annulée",
    "closed.lobby_full": "le salon était plein",
    "closed.expired": "personne n'est venu à temps",
    "closed.operator": "un opérateur l'a fermée",
    "closed.paired": "la partie rapide vous a placé dans une autre course",
    "go": "Partez !",
    "joined": "{name} est arrivé.",
    "left_before_start": "{name} est parti avant le départ.",
    "disconnected": "{name} s'est déconnecté.",
    "back": "{name} est de retour.",
    "you_win": "Vous gagnez : {reason}.",
    "wins": "{name} gagne : {reason}.",
    "draw": "Égalité : chacun a {count}/52 sur les fondations.",
    "waiting": "En attente d'un adversaire ...",
    "opponent_joins": "Votre adversaire rejoint avec :",
    "keys_help": """Touches du plein écran (le pied de page montre celles qui marchent maintenant) :
  5d ts 10h    tapez une carte : elle part si elle n'a qu'une destination légale, sinon ses destinations s'allument
  f 1-6        la destination de la carte allumée : sa fondation, une colonne (Échap annule)
  souris       cliquez une carte, puis un numéro de colonne allumé ou « Foundations »
  m            la liste numérotée des coups légaux (flèches et Entrée, ou un clic, en jouent un)
  o            coups automatiques : les cartes sûres montent seules aux fondations
  u            annuler (courses avec annulation ; compté)
  e            la redistribution unique (courses qui la permettent ; demande d'abord)
  x  g         se déclarer bloqué, abandonner (chacun demande d'abord)
  ?            cette aide
  Ctrl-Q Ctrl-C Ctrl-D   partir tout de suite
Après le résultat : r revanche, p revoir la course, l le salon, q quitter.""",
}
