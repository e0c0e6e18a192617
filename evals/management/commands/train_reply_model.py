"""Rebuild the learned reply readers from the labelled replies (deterministic)."""

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from evals import reply_model, reply_routes, reply_thresholds
from outreach.replies.examples import EXAMPLES
from outreach.replies.reader import ARTIFACT, MULTILINGUAL_ARTIFACT
from outreach.replies.safety import SENTENCE_ESCALATION


class Command(BaseCommand):
    help = (
        "Train the reply readers from evals/data/replies (all files but the sealed holdouts): "
        "the English and Spanish reader and the multilingual one, each calibrated with its "
        "thresholds set on grouped held-out readings of the replies the route gives it; write "
        "outreach/replies/reader.json.gz, reader-multilingual.json.gz and the labelled replies "
        "a model is shown (examples.json.gz). --check only compares with the committed files."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--check",
            action="store_true",
            help="exit 1 if retraining does not reproduce the committed artifacts byte for byte",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        training = reply_routes.train(settings.REPLY_CONFIDENCE_THRESHOLD)
        built = {
            ARTIFACT: reply_model.artifact_bytes(training.document),
            MULTILINGUAL_ARTIFACT: reply_model.artifact_bytes(training.multilingual),
            EXAMPLES: reply_model.artifact_bytes(training.examples_document),
        }
        self._report(training)
        if options["check"]:
            for path, data in built.items():
                if not path.exists() or path.read_bytes() != data:
                    raise CommandError(
                        f"{path.name} is not what training builds: run train_reply_model"
                    )
                self.stdout.write(f"{path.name} is reproduced exactly")
            return
        for path, data in built.items():
            path.write_bytes(data)
            self.stdout.write(f"wrote {path} ({len(data) / 1024:.0f} KiB)")

    def _report(self, training: reply_routes.Training) -> None:
        for name, document in (
            ("English and Spanish reader", training.document),
            ("multilingual reader", training.multilingual),
        ):
            features = sum(len(block["terms"]) for block in document["blocks"])
            self.stdout.write(
                f"{name}: trained on {document['meta']['replies']} replies "
                f"({', '.join(document['meta']['trained_on'])}); {features} features; "
                f"temperature {document['temperature']}; "
                f"escalation threshold {document['escalation_threshold']:.2f}, "
                f"review threshold {document['review_threshold']:.2f}"
            )
        held = reply_model.score_routes(training.examples, training.routed)
        self.stdout.write(
            "grouped held-out (one source out at a time), each reply read by the reader the "
            f"route gives it ({len(training.multilingual_rows)} to the multilingual one): "
            f"bucket accuracy {held['bucket_accuracy']:.1%}, "
            f"escalation recall {held['escalation_recall']:.1%} of {held['escalations']}, "
            "escalations acted on without a person "
            f"{held['escalations_acted_on_without_a_person']}, "
            f"ordinary replies to a person {held['ordinary_to_person_rate']:.1%}, "
            f"automation {held['automation']:.1%}"
        )
        for reply_id in held["acted_alone_ids"]:
            # What a person must look at first: an escalation no person would have seen.
            self.stdout.write(f"  acted on without a person, held out: {reply_id}")
        self.stdout.write(
            "by language (replies, bucket accuracy, escalation recall, acted on alone, ordinary "
            "replies to a person); the multilingual reader reads: "
            f"{', '.join(training.multilingual.get('languages', []))}"
        )
        by_language = reply_model.routes_by_language(training.examples, training.routed)
        for language, figures in by_language.items():
            self.stdout.write(
                f"  {language:<4} {figures['replies']:>5}  {figures['bucket_accuracy']:.1%}  "
                f"{figures['escalation_recall']:.1%}  "
                f"{figures['escalations_acted_on_without_a_person']}  "
                f"{figures['ordinary_to_person_rate']:.1%}"
            )
        policy = training.other.policy
        self.stdout.write(
            "multilingual reader, review thresholds by language (the whole reading; the "
            "n-grams alone, where they have one): "
            + ", ".join(
                f"{language} {review:g}"
                + (
                    f" / {policy.ngram_review_by_language[language]:g}"
                    if language in policy.ngram_review_by_language
                    else ""
                )
                for language, review in sorted(policy.review_by_language.items())
            )
        )
        rows = training.multilingual_rows
        self.stdout.write(
            "multilingual reader, on the replies the route gives it: threshold for a person → "
            "recall, acted on alone, automation, accuracy:"
        )
        for row in reply_thresholds.tradeoff(
            [training.examples[i] for i in rows],
            training.other.probs[rows],
            settings.REPLY_CONFIDENCE_THRESHOLD,
            training.other.policy.escalation_threshold,
        ):
            self.stdout.write(
                f"  {row['threshold']:.2f}  {row['escalation_recall']:.1%}  "
                f"{row['acted_alone']}  {row['automation']:.1%}  {row['bucket_accuracy']:.1%}"
            )
        self.stdout.write(
            "escalation_anywhere (a sentence read alone) on the replies the multilingual reader "
            f"reads, held out: threshold → bucket accuracy, recall, acted on alone, ordinary "
            f"replies to a person (shipped: {SENTENCE_ESCALATION}; 1.00: the rule off):"
        )
        for row in reply_routes.sentence_tradeoff(training):
            self.stdout.write(
                f"  {row['threshold']:.2f}  {row['bucket_accuracy']:.1%}  "
                f"{row['escalation_recall']:.1%}  "
                f"{row['escalations_acted_on_without_a_person']}  "
                f"{row['ordinary_to_person_rate']:.1%}"
            )
